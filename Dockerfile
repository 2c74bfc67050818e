# kfpbench in a container: `kfpbench serve`, `kfpbench run`, the benchmark
# pipelines' steps (`kfpbench step`) and the job examples (PyTorch DDP, MPI).
# Debian 12 with the packages of scripts/setup; see docs/KUBERNETES.md.
# Not built in this repository's CI (no Docker engine there).
#
#   docker build -t REGISTRY/kfpbench/kfpbench:VERSION .   (kfpbench --version)
#   docker push REGISTRY/kfpbench/kfpbench:VERSION
# then `kube loadgen --image` and a job config's `image:` name it. Nothing is
# published under the default name ghcr.io/kfpbench/kfpbench.

FROM debian:12 AS build
WORKDIR /src
COPY . .
# scripts/setup installs the build packages (and npm for the HTML report's
# uPlot) and builds build/kfpbench in Release; tests are not run here.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates sudo \
 && rm -rf build && scripts/setup \
 && strip build/kfpbench

FROM debian:12
# Runtime libraries of the binary (every one `ldd build/kfpbench` lists beyond
# the base image; DeployManifests.DockerfileCarriesTheBinarysLibraries checks),
# plus what the examples run: python3-torch (examples/jobs DDP benchmark),
# openmpi-bin (MPIJob launchers).
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates libfmt9 libspdlog1.10 libsqlite3-0 libyaml-cpp0.7 libssl3 libsimdjson14 \
      python3-torch openmpi-bin \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/kfpbench /usr/local/bin/kfpbench
COPY examples /opt/kfpbench/examples
# A non-root user (uid and gid 10001, kube/loadgen.h's kLoadgenUid), so that
# the pods meet the `restricted` Pod Security Standard.
RUN groupadd --gid 10001 kfpbench \
 && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin kfpbench \
 && install -d -o 10001 -g 10001 /work
# The job examples find their scripts here: --set config_dir=/opt/kfpbench/examples/jobs
WORKDIR /work
USER 10001:10001
ENTRYPOINT ["kfpbench"]
CMD ["--help"]

#!/usr/bin/env python3
"""PyTorch DDP training benchmark on CPU (gloo), synthetic data.

Run by `kfpbench job pytorch-ddp-cpu.yaml`: each replica gets MASTER_ADDR,
MASTER_PORT, WORLD_SIZE and RANK the way the Kubeflow training operator sets
them for a PyTorchJob, so the same script runs in a cluster unchanged.
Prints one JSON line per replica: samples/sec (this replica's share), mean step
time, and the loss, which must fall: a benchmark that does not train is not one.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--features", type=int, default=512)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")  # env:// from the operator's variables
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234 + rank)

    model = DDP(nn.Sequential(nn.Linear(args.features, args.hidden), nn.ReLU(),
                              nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                              nn.Linear(args.hidden, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    # Synthetic data with a learnable rule, generated once: the benchmark
    # measures training, not data loading.
    x = torch.randn(args.batch_size, args.features)
    y = (x[:, :10].argmax(dim=1))

    first_loss = None
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            dist.barrier()
            start = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # gradients all-reduced across replicas here
        opt.step()
        if first_loss is None:
            first_loss = loss.item()
    elapsed = time.perf_counter() - start
    samples = args.batch_size * args.steps
    print(json.dumps({
        "rank": rank,
        "world_size": world,
        "batch_size": args.batch_size,
        "samples_per_sec": samples / elapsed,
        "step_time_s": elapsed / args.steps,
        "first_loss": first_loss,
        "last_loss": loss.item(),
    }), flush=True)
    print(f"rank {rank}: samples/sec: {samples / elapsed:.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

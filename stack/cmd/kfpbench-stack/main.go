// Command kfpbench-stack is a whole Kubernetes control plane in one binary,
// one subcommand per component (as k3s does), so that the Kubernetes packages
// the components share are compiled once: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok (kubelets stand-in) and
// kubectl. Invoked through a link named after a component (kubectl -> this
// binary), it runs that component.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"

	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kfpbench-stack {etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok|kubectl} [flags]")
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if !isComponent(name) {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	os.Args = append([]string{name}, args...)
	switch name {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kwok":
		os.Exit(runKwok(context.Background()))
	case "kubectl":
		command := kubectlcmd.NewDefaultKubectlCommand()
		if err := cli.RunNoErrOutput(command); err != nil {
			os.Exit(1)
		}
	default:
		usage()
		os.Exit(2)
	}
}

func isComponent(name string) bool {
	switch strings.TrimSuffix(name, ".exe") {
	case "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl":
		return true
	}
	return false
}

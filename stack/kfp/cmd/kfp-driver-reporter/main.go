// Command kfp-driver-reporter stands in for KFP v2's driver on kwok's fake
// nodes, where no container runs. A v2 pipeline's workflow (KFP's
// argocompiler) runs a driver pod before each task and DAG; later templates
// read the driver's output parameters (execution-id, iteration-count,
// condition, cached-decision, pod-spec-patch), which Argo's controller takes
// from the pod's WorkflowTaskResult. Without them the DAG never proceeds.
//
// This writes those outputs into the driver pod's WorkflowTaskResult while the
// pod runs; argo-wait-reporter (stack/argo) marks the result completed when
// the pod's main container exits, leaving the outputs in place. The values
// are what a driver answers when nothing is cached and every condition holds:
// a fresh execution-id, condition "true", cached-decision "false", an empty
// pod-spec-patch (the task's pod keeps KFP's placeholder container), and
// iteration-count the length of a ParallelFor's literal items (0 for items
// from a parameter, which no driver here resolves). KFP's MLMD bookkeeping,
// caching and real conditions are not imitated.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierr "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

const (
	workflowLabel  = "workflows.argoproj.io/workflow"
	completedLabel = "workflows.argoproj.io/report-outputs-completed"
	nodeIDKey      = "workflows.argoproj.io/node-id"
	outputsDir     = "/tmp/outputs/"
)

var taskResults = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflowtaskresults"}

type reporter struct {
	results  dynamic.Interface
	pods     cache.Indexer
	queue    workqueue.RateLimitingInterface
	mu       sync.Mutex
	done     map[types.UID]bool
	nextExec int64
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	namespace := flag.String("namespace", "", "the runs' namespace (all when empty)")
	flag.Parse()
	if err := run(*kubeconfig, *namespace); err != nil {
		fmt.Fprintln(os.Stderr, "kfp-driver-reporter:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	results, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = workflowLabel }))
	informer := factory.Core().V1().Pods().Informer()
	r := &reporter{
		results:  results,
		pods:     informer.GetIndexer(),
		queue:    workqueue.NewRateLimitingQueue(workqueue.DefaultControllerRateLimiter()),
		done:     map[types.UID]bool{},
		nextExec: time.Now().Unix() % 1000000 * 1000,
	}
	enqueue := func(obj interface{}) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			r.queue.Add(key)
		}
	}
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("pod cache did not sync")
	}
	fmt.Fprintln(os.Stderr, "kfp-driver-reporter: reporting for KFP's driver pods")
	for i := 0; i < 4; i++ {
		go func() {
			for r.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	return nil
}

func (r *reporter) next(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if err := r.sync(ctx, key.(string)); err != nil {
		fmt.Fprintf(os.Stderr, "kfp-driver-reporter: %s: %v (retrying)\n", key, err)
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	return true
}

func (r *reporter) sync(ctx context.Context, key string) error {
	obj, exists, err := r.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	r.mu.Lock()
	done := r.done[pod.UID]
	r.mu.Unlock()
	args := driverArgs(pod)
	nodeID := pod.Annotations[nodeIDKey]
	owner := workflowOwner(pod)
	if done || args == nil || nodeID == "" || owner == nil || pod.Spec.NodeName == "" {
		return nil // reported, not a driver, or not bound yet
	}
	outputs := map[string]interface{}{"parameters": r.outputs(args)}
	client := r.results.Resource(taskResults).Namespace(pod.Namespace)
	result := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "WorkflowTaskResult",
		"metadata": map[string]interface{}{
			"name": nodeID,
			"labels": map[string]interface{}{
				workflowLabel:  pod.Labels[workflowLabel],
				completedLabel: "false",
			},
			"ownerReferences": []interface{}{owner},
		},
		"outputs": outputs,
	}}
	_, err = client.Create(ctx, result, metav1.CreateOptions{})
	if apierr.IsAlreadyExists(err) {
		// argo-wait-reporter's placeholder came first: add the outputs, keep its label.
		patch, _ := json.Marshal(map[string]interface{}{"outputs": outputs})
		_, err = client.Patch(ctx, nodeID, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.done[pod.UID] = true
	r.mu.Unlock()
	return nil
}

// driverArgs is the driver's flags (--name value) when the pod runs KFP's
// driver, else nil.
func driverArgs(pod *corev1.Pod) map[string]string {
	for _, c := range pod.Spec.Containers {
		// Argo's emissary runs the template's command after its own "--".
		if c.Name != "main" || len(c.Command) == 0 || c.Command[len(c.Command)-1] != "driver" {
			continue
		}
		args := map[string]string{}
		for i := 0; i+1 < len(c.Args); i += 2 {
			args[strings.TrimPrefix(c.Args[i], "--")] = c.Args[i+1]
		}
		return args
	}
	return nil
}

// outputs answers each output the driver was asked to write (its --*_path
// flags name the files Argo reads them from).
func (r *reporter) outputs(args map[string]string) []interface{} {
	var out []interface{}
	for flag, path := range args {
		if !strings.HasSuffix(flag, "_path") || !strings.HasPrefix(path, outputsDir) {
			continue
		}
		name := strings.TrimPrefix(path, outputsDir)
		value := ""
		switch name {
		case "execution-id":
			value = fmt.Sprint(atomic.AddInt64(&r.nextExec, 1))
		case "iteration-count":
			value = fmt.Sprint(iterationCount(args["task"]))
		case "condition":
			value = "true"
		case "cached-decision":
			value = "false"
		case "pod-spec-patch":
			value = ""
		}
		out = append(out, map[string]interface{}{"name": name, "value": value})
	}
	return out
}

// iterationCount is the number of a ParallelFor's literal items in the
// task's spec (KFP's PipelineTaskSpec as JSON), 0 otherwise.
func iterationCount(task string) int {
	var spec struct {
		ParameterIterator struct {
			Items struct {
				Raw string `json:"raw"`
			} `json:"items"`
		} `json:"parameterIterator"`
	}
	if json.Unmarshal([]byte(task), &spec) != nil || spec.ParameterIterator.Items.Raw == "" {
		return 0
	}
	var items []interface{}
	if json.Unmarshal([]byte(spec.ParameterIterator.Items.Raw), &items) != nil {
		return 0
	}
	return len(items)
}

func workflowOwner(pod *corev1.Pod) map[string]interface{} {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Workflow" && strings.HasPrefix(ref.APIVersion, "argoproj.io/") {
			return map[string]interface{}{"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name, "uid": string(ref.UID)}
		}
	}
	return nil
}

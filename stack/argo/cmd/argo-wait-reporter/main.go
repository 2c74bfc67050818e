// Command argo-wait-reporter stands in for the `wait` container of Argo
// Workflows' pods on kwok's fake nodes, where no container runs. Argo's
// controller does not count a pod's node as done until the executor in that
// container has reported its outputs in a WorkflowTaskResult labelled
// workflows.argoproj.io/report-outputs-completed=true (argoexec's
// workflow/executor/taskresult.go). This writes what the executor writes, at
// the moments it writes it: an empty placeholder (label "false") once the
// pod's containers run, and the completed label once `main` has exited.
// Then it lets the wait container exit: it sets kfpbench.dev/wait-exit-seconds
// "0" on the pod, which kwok's argo-wait-exits Stage (stack/argo/kwok.yaml)
// waits for, so the pod ends after its outputs are reported, as a real one
// does. Outputs stay empty: a kwok pod produces none.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	corev1 "k8s.io/api/core/v1"
	apierr "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// reported is how far the executor's reporting of one pod has got.
type reported int

const (
	nothing reported = iota
	placeholder
	completed
)

// waitExitAnnotation lets kwok end the pod (stack/argo/kwok.yaml).
const waitExitAnnotation = "kfpbench.dev/wait-exit-seconds"

type reporter struct {
	kube    kubernetes.Interface
	results wfclientset.Interface
	pods    cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	state   map[types.UID]reported
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	workers := flag.Int("workers", 8, "pods reported on at once")
	qps := flag.Float64("qps", 200, "API requests a second (each real wait container has its own client)")
	flag.Parse()
	if err := run(*kubeconfig, *workers, float32(*qps)); err != nil {
		fmt.Fprintln(os.Stderr, "argo-wait-reporter:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, workers int, qps float32) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = qps, int(2*qps)
	config.UserAgent = "argo-wait-reporter"
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	results, err := wfclientset.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// Only the pods of workflows (Argo labels every pod it creates).
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = common.LabelKeyWorkflow }))
	informer := factory.Core().V1().Pods().Informer()
	r := &reporter{
		kube:    kube,
		results: results,
		pods:    informer.GetIndexer(),
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		state:   map[types.UID]reported{},
	}
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			r.queue.Add(key)
		}
	}
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.mu.Lock()
				delete(r.state, pod.UID)
				r.mu.Unlock()
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("pods never synced")
	}
	fmt.Fprintln(os.Stderr, "argo-wait-reporter: reporting for the pods of workflows")
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
	return nil
}

func (r *reporter) next(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if err := r.sync(ctx, key); err != nil {
		fmt.Fprintf(os.Stderr, "argo-wait-reporter: %s: %v (retrying)\n", key, err)
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	return true
}

// sync reports for one pod what its wait container would have by now.
func (r *reporter) sync(ctx context.Context, key string) error {
	obj, exists, err := r.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	want := due(pod)
	r.mu.Lock()
	done := r.state[pod.UID]
	r.mu.Unlock()
	if want <= done {
		return nil
	}
	nodeID := pod.Annotations[common.AnnotationKeyNodeID]
	owner := workflowOwner(pod)
	if nodeID == "" || owner == nil {
		return nil // not a pod of a workflow's node (an agent pod, say): no wait container
	}
	client := r.results.ArgoprojV1alpha1().WorkflowTaskResults(pod.Namespace)
	label := "false"
	if want == completed {
		label = "true"
	}
	result := &wfv1.WorkflowTaskResult{
		ObjectMeta: metav1.ObjectMeta{
			Name: nodeID,
			Labels: map[string]string{
				common.LabelKeyWorkflow:               pod.Labels[common.LabelKeyWorkflow],
				common.LabelKeyReportOutputsCompleted: label,
			},
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
	}
	if id := pod.Labels[common.LabelKeyControllerInstanceID]; id != "" {
		result.Labels[common.LabelKeyControllerInstanceID] = id
	}
	_, err = client.Create(ctx, result, metav1.CreateOptions{})
	if apierr.IsAlreadyExists(err) && want == completed {
		// The executor's FinalizeOutput: a merge patch of the label alone.
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{
			common.LabelKeyReportOutputsCompleted: "true"}}})
		_, err = client.Patch(ctx, nodeID, types.MergePatchType, patch, metav1.PatchOptions{})
	} else if apierr.IsAlreadyExists(err) {
		err = nil
	}
	if err != nil {
		return err
	}
	if want == completed {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			waitExitAnnotation: "0"}}})
		_, err = r.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierr.IsNotFound(err) {
			err = nil
		}
		if err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.state[pod.UID] = want
	r.mu.Unlock()
	return nil
}

// due is what the pod's wait container would have reported: the placeholder
// once it runs, the completed label once `main` has exited.
func due(pod *corev1.Pod) reported {
	var wait, main *corev1.ContainerStatus
	for i, c := range pod.Status.ContainerStatuses {
		switch c.Name {
		case common.WaitContainerName:
			wait = &pod.Status.ContainerStatuses[i]
		case common.MainContainerName:
			main = &pod.Status.ContainerStatuses[i]
		}
	}
	switch {
	case wait == nil || main == nil:
		return nothing
	case main.State.Terminated != nil:
		return completed
	case wait.State.Running != nil:
		return placeholder
	}
	return nothing
}

func workflowOwner(pod *corev1.Pod) *metav1.OwnerReference {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Workflow" && ref.APIVersion == wfv1.SchemeGroupVersion.String() {
			return &metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
		}
	}
	return nil
}

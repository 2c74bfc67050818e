// Command argo-run-plan runs a workload plan (`kfpbench stack-plan` writes
// it: the runs the simulator ran, each with its arrival, its tasks' DAG,
// requests and the durations the simulator sampled) on a cluster with Argo
// Workflows' controller, and writes down what happened, for `kfpbench
// stack-result` to read.
//
// Each run becomes one Workflow shaped as KFP's compiler shapes a pipeline,
// minus the driver and launcher pods: a DAG template for the root and one
// for every DAG task (ParallelFor loops and their iterations too: a loop's
// iterations are tasks of the loop's DAG, where KFP's compiler writes one
// task with withParam; Argo makes a node per item either way), a container
// template per step asking the step's requests, annotated with the step's
// duration for kwok (kfpbench.dev/run-seconds, divided by the time scale).
// Runs are created at their arrival (divided by the time scale). Pods and
// workflows are watched; each change is timed when this program sees it
// (millisecond clock, where the API's own timestamps are whole seconds):
// pod created, bound to a node, main running, main exited; workflow done.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The plan's format (src/sim/workload_plan.h).
type planTask struct {
	ID           int      `json:"id"`
	Parent       int      `json:"parent"` // -1: the root DAG
	Name         string   `json:"name"`
	Kind         string   `json:"kind"` // "container" or "dag"
	Dependencies []string `json:"dependencies"`
	Seconds      float64  `json:"seconds"`
	CPUMillis    int64    `json:"cpu_millis"`
	MemoryBytes  int64    `json:"memory_bytes"`
}

type planRun struct {
	Name           string     `json:"name"`
	ArrivalSeconds float64    `json:"arrival_seconds"`
	Tasks          []planTask `json:"tasks"`
}

type workloadPlan struct {
	Format string    `json:"format"`
	Runs   []planRun `json:"runs"`
}

const planFormat = "kfpbench-workload-plan/1"

// What this program saw, in seconds since `start` (wall clock).
type podRecord struct {
	Task      int     `json:"task"`
	Node      string  `json:"node,omitempty"`
	Created   float64 `json:"created"`
	Scheduled float64 `json:"scheduled"`
	Started   float64 `json:"started"`
	Finished  float64 `json:"finished"`
	ExitCode  int32   `json:"exit_code"`
}

type runRecord struct {
	Name      string       `json:"name"`
	Due       float64      `json:"due"`       // its arrival over the time scale
	Submitted float64      `json:"submitted"` // when the create call returned
	Finished  float64      `json:"finished"`  // workflow seen Succeeded, Failed or Error
	Phase     string       `json:"phase"`
	Message   string       `json:"message,omitempty"`
	Pods      []*podRecord `json:"pods"`
}

type record struct {
	Format    string       `json:"format"`
	TimeScale float64      `json:"time_scale"`
	Nodes     int          `json:"nodes"`
	Complete  bool         `json:"complete"`
	Runs      []*runRecord `json:"runs"`
}

const recordFormat = "kfpbench-stack-record/1"

const (
	taskAnnotation = "kfpbench.dev/plan-task"
	runLabel       = "kfpbench.dev/plan-run"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	planPath := flag.String("plan", "", "the workload plan (kfpbench stack-plan --out)")
	out := flag.String("out", "stack-record.json", "what happened, for kfpbench stack-result")
	namespace := flag.String("namespace", "default", "namespace to run the workflows in")
	scale := flag.Float64("time-scale", 1, "simulated seconds per wall second: durations and arrivals are divided by it")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up (exit 1) if the runs have not all finished by then")
	image := flag.String("image", "example/kfp-step:1", "the steps' image (kwok pulls nothing)")
	qps := flag.Float64("qps", 100, "this client's API requests a second (KFP's API server creating workflows)")
	flag.Parse()
	if *planPath == "" || *scale <= 0 || math.IsInf(*scale, 0) || math.IsNaN(*scale) {
		fmt.Fprintln(os.Stderr, "argo-run-plan: --plan is required and --time-scale must be positive")
		os.Exit(2)
	}
	p, err := readPlan(*planPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argo-run-plan:", err)
		os.Exit(2)
	}
	rec, err := run(*kubeconfig, p, *namespace, *scale, *timeout, *image, float32(*qps))
	if rec != nil {
		if werr := writeRecord(*out, rec); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argo-run-plan:", err)
		os.Exit(1)
	}
}

func readPlan(path string) (*workloadPlan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p workloadPlan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if p.Format != planFormat {
		return nil, fmt.Errorf("%s: format %q, expected %q", path, p.Format, planFormat)
	}
	if len(p.Runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", path)
	}
	return &p, nil
}

func writeRecord(path string, rec *record) error {
	data, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// templateName of a plan task; the root DAG is "pipeline".
func templateName(id int) string { return "t" + strconv.Itoa(id) }

// workflow builds run r's Workflow (see the package comment).
func workflow(r *planRun, scale float64, image string) (*wfv1.Workflow, error) {
	children := map[int][]*planTask{}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		children[t.Parent] = append(children[t.Parent], t)
	}
	dag := func(parent int) *wfv1.DAGTemplate {
		d := &wfv1.DAGTemplate{}
		for _, t := range children[parent] {
			d.Tasks = append(d.Tasks, wfv1.DAGTask{Name: t.Name, Template: templateName(t.ID), Dependencies: t.Dependencies})
		}
		return d
	}
	templates := []wfv1.Template{{Name: "pipeline", DAG: dag(-1)}}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		switch t.Kind {
		case "dag":
			templates = append(templates, wfv1.Template{Name: templateName(t.ID), DAG: dag(t.ID)})
		case "container":
			if t.Seconds < 0 || t.CPUMillis <= 0 || t.MemoryBytes <= 0 {
				return nil, fmt.Errorf("run %s, task %s: needs seconds ≥ 0 and positive requests", r.Name, t.Name)
			}
			templates = append(templates, wfv1.Template{
				Name: templateName(t.ID),
				Metadata: wfv1.Metadata{Annotations: map[string]string{
					"kfpbench.dev/start-seconds": "0",
					"kfpbench.dev/run-seconds":   strconv.FormatFloat(t.Seconds/scale, 'f', 3, 64),
					taskAnnotation:               strconv.Itoa(t.ID),
				}},
				Container: &corev1.Container{
					Image:   image,
					Command: []string{"kfpbench", "step"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    *resource.NewMilliQuantity(t.CPUMillis, resource.DecimalSI),
						corev1.ResourceMemory: *resource.NewQuantity(t.MemoryBytes, resource.BinarySI),
					}},
				},
			})
		default:
			return nil, fmt.Errorf("run %s, task %s: unknown kind %q", r.Name, t.Name, t.Kind)
		}
	}
	return &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: map[string]string{runLabel: r.Name}},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "pipeline", Templates: templates},
	}, nil
}

type watcher struct {
	mu      sync.Mutex
	start   time.Time
	runs    map[string]*runRecord
	pods    map[string]*podRecord // by pod name
	done    int
	allDone chan struct{}
}

// now is called with mu held.
func (w *watcher) now() float64 { return time.Since(w.start).Seconds() }

// pod notes the first time each of the pod's stages is seen.
func (w *watcher) pod(pod *corev1.Pod) {
	wf := pod.Labels[common.LabelKeyWorkflow]
	id, err := strconv.Atoi(pod.Annotations[taskAnnotation])
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.now()
	run := w.runs[wf]
	if run == nil {
		return
	}
	rec := w.pods[pod.Namespace+"/"+pod.Name]
	if rec == nil {
		rec = &podRecord{Task: id, Created: t, Scheduled: -1, Started: -1, Finished: -1}
		w.pods[pod.Namespace+"/"+pod.Name] = rec
		run.Pods = append(run.Pods, rec)
	}
	if rec.Scheduled < 0 && pod.Spec.NodeName != "" {
		rec.Scheduled, rec.Node = t, pod.Spec.NodeName
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != common.MainContainerName {
			continue
		}
		if rec.Started < 0 && (c.State.Running != nil || c.State.Terminated != nil) {
			rec.Started = t
		}
		if rec.Finished < 0 && c.State.Terminated != nil {
			rec.Finished, rec.ExitCode = t, c.State.Terminated.ExitCode
		}
	}
}

func (w *watcher) workflow(wf *wfv1.Workflow) {
	if !wf.Status.Phase.Completed() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.now()
	run := w.runs[wf.Name]
	if run == nil || run.Phase != "" {
		return
	}
	run.Finished, run.Phase, run.Message = t, string(wf.Status.Phase), wf.Status.Message
	w.done++
	if w.done == len(w.runs) {
		close(w.allDone)
	}
}

func run(kubeconfig string, p *workloadPlan, namespace string, scale float64, timeout time.Duration,
	image string, qps float32) (*record, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = qps, int(2*qps)
	config.UserAgent = "argo-run-plan"
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	wfs, err := wfclientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	workflows := make([]*wfv1.Workflow, len(p.Runs))
	w := &watcher{runs: map[string]*runRecord{}, pods: map[string]*podRecord{}, allDone: make(chan struct{})}
	rec := &record{Format: recordFormat, TimeScale: scale}
	for i := range p.Runs {
		r := &p.Runs[i]
		if workflows[i], err = workflow(r, scale, image); err != nil {
			return nil, err
		}
		if w.runs[r.Name] != nil {
			return nil, fmt.Errorf("two runs named %s", r.Name)
		}
		run := &runRecord{Name: r.Name, Due: r.ArrivalSeconds / scale, Submitted: -1, Finished: -1, Pods: []*podRecord{}}
		w.runs[r.Name] = run
		rec.Runs = append(rec.Runs, run)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	rec.Nodes = len(nodes.Items)

	podInformer := cache.NewSharedIndexInformer(
		cache.NewListWatchFromClient(kube.CoreV1().RESTClient(), "pods", namespace, fields.Everything()),
		&corev1.Pod{}, 0, cache.Indexers{})
	wfInformer := cache.NewSharedIndexInformer(
		cache.NewListWatchFromClient(wfs.ArgoprojV1alpha1().RESTClient(), "workflows", namespace, fields.Everything()),
		&wfv1.Workflow{}, 0, cache.Indexers{})
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.pod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { w.pod(obj.(*corev1.Pod)) },
	}); err != nil {
		return nil, err
	}
	if _, err := wfInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.workflow(obj.(*wfv1.Workflow)) },
		UpdateFunc: func(_, obj any) { w.workflow(obj.(*wfv1.Workflow)) },
	}); err != nil {
		return nil, err
	}
	go podInformer.Run(ctx.Done())
	go wfInformer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, wfInformer.HasSynced) {
		return nil, fmt.Errorf("pods and workflows of namespace %s never synced", namespace)
	}

	// Creations in arrival order, a few at once (a burst of arrivals is
	// created as fast as the API takes them, as KFP's API server would).
	order := make([]int, len(p.Runs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p.Runs[order[a]].ArrivalSeconds < p.Runs[order[b]].ArrivalSeconds })
	next := make(chan int)
	errs := make(chan error, 1)
	var creators sync.WaitGroup
	w.mu.Lock()
	w.start = time.Now()
	w.mu.Unlock()
	for c := 0; c < 8; c++ {
		creators.Add(1)
		go func() {
			defer creators.Done()
			for i := range next {
				run := rec.Runs[i]
				select {
				case <-time.After(time.Until(w.start.Add(time.Duration(run.Due * float64(time.Second))))):
				case <-ctx.Done():
					return
				}
				_, err := wfs.ArgoprojV1alpha1().Workflows(namespace).Create(ctx, workflows[i], metav1.CreateOptions{})
				if err != nil {
					select {
					case errs <- fmt.Errorf("creating workflow %s: %v", run.Name, err):
					default:
					}
					cancel()
					return
				}
				w.mu.Lock()
				run.Submitted = w.now()
				w.mu.Unlock()
			}
		}()
	}
	go func() {
		defer close(next)
		for _, i := range order {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	select {
	case <-w.allDone:
	case <-ctx.Done():
	}
	cancel()
	creators.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	rec.Complete = w.done == len(w.runs)
	select {
	case err := <-errs:
		return rec, err
	default:
	}
	if !rec.Complete {
		return rec, fmt.Errorf("%d of %d runs finished before the timeout (%v) or interrupt", w.done, len(w.runs), timeout)
	}
	return rec, nil
}

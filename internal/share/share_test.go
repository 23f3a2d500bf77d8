package share

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/informerkit/informerkit/meta"
)

// sPod is a pod as a controller would declare it, shaped like client-go's corev1.Pod where it
// matters for sharing: nested structs by value, pointers, slices of structs, string maps, a
// map with a named key type and a quantity value with unexported fields, times.
type sPod struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Spec            sPodSpec   `json:"spec"`
	Status          sPodStatus `json:"status"`
}

type sPodSpec struct {
	Volumes                       []sVolume    `json:"volumes,omitempty"`
	Containers                    []sContainer `json:"containers"`
	NodeName                      string       `json:"nodeName,omitempty"`
	TerminationGracePeriodSeconds *int64       `json:"terminationGracePeriodSeconds,omitempty"`
	NodeSelector                  map[string]string
}

type sVolume struct {
	Name      string            `json:"name"`
	ConfigMap *sConfigMapVolume `json:"configMap,omitempty"`
}

type sConfigMapVolume struct {
	Name  string  `json:"name"`
	Items []sItem `json:"items,omitempty"`
}

type sItem struct{ Key, Path string }

type sContainer struct {
	Name         string         `json:"name"`
	Image        string         `json:"image"`
	Args         []string       `json:"args,omitempty"`
	Env          []sEnvVar      `json:"env,omitempty"`
	Ports        []sPort        `json:"ports,omitempty"`
	Resources    sResources     `json:"resources"`
	VolumeMounts []sVolumeMount `json:"volumeMounts,omitempty"`
	Probe        *sProbe        `json:"livenessProbe,omitempty"`
}

type sEnvVar struct {
	Name      string     `json:"name"`
	Value     string     `json:"value,omitempty"`
	ValueFrom *sEnvFrom  `json:"valueFrom,omitempty"`
	Secret    *sKeyRef   `json:"secretKeyRef,omitempty"`
	Unused    [2]float64 `json:"-"`
}

type sEnvFrom struct {
	FieldPath string `json:"fieldPath"`
}

type sKeyRef struct{ Name, Key string }

type sPort struct {
	Name          string `json:"name"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

type sResources struct {
	Limits   sResourceList `json:"limits,omitempty"`
	Requests sResourceList `json:"requests,omitempty"`
}

type sResourceName string

type sResourceList map[sResourceName]sQuantity

// sQuantity is like resource.Quantity: unexported fields and its own JSON form.
type sQuantity struct {
	milli  int64
	cached string
	Format string
}

func (q *sQuantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, format := strings.TrimSuffix(s, "m"), "DecimalSI"
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return err
	}
	if n == s {
		v *= 1000
	}
	*q = sQuantity{milli: v, Format: format}
	return nil
}

func (q sQuantity) MarshalJSON() ([]byte, error) { return json.Marshal(fmt.Sprintf("%dm", q.milli)) }

type sVolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type sProbe struct {
	Path             string `json:"path"`
	Port             int32  `json:"port"`
	PeriodSeconds    int32  `json:"periodSeconds"`
	FailureThreshold int32  `json:"failureThreshold"`
}

type sPodStatus struct {
	Phase             string             `json:"phase"`
	Conditions        []sCondition       `json:"conditions,omitempty"`
	PodIP             string             `json:"podIP,omitempty"`
	ContainerStatuses []sContainerStatus `json:"containerStatuses,omitempty"`
	StartTime         *meta.Time         `json:"startTime,omitempty"`
}

type sCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime meta.Time `json:"lastTransitionTime"`
}

type sContainerStatus struct {
	Name        string `json:"name"`
	Image       string `json:"image"`
	ContainerID string `json:"containerID"`
	Ready       bool   `json:"ready"`
}

// deploymentPodJSON is replica r of deployment d: everything but the name, uid, IP, node,
// start time and container ID comes from the deployment's template.
func deploymentPodJSON(d, r int) []byte {
	app := fmt.Sprintf("app-%d", d)
	ts := fmt.Sprintf("2026-03-01T10:%02d:%02dZ", r/60%60, r%60)
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%[1]s-7d9c-%05[2]d","namespace":"team-%[3]d","uid":"uid-%[3]d-%[2]d","resourceVersion":"%[4]d",
"generateName":"%[1]s-7d9c-","creationTimestamp":"%[5]s",
"labels":{"app":"%[1]s","pod-template-hash":"7d9c","team":"t%[3]d"},
"annotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9090"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%[1]s-7d9c","uid":"rs-%[3]d","controller":true}]},
"spec":{"volumes":[{"name":"config","configMap":{"name":"%[1]s-config","items":[{"Key":"a","Path":"b"}]}}],
"containers":[{"name":"%[1]s","image":"registry.example.com/%[1]s:v1.%[3]d","args":["--port=8080","--verbose"],
"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldPath":"metadata.name"}},{"name":"A"},{"name":"B"},{"name":"C"}],
"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
"resources":{"limits":{"cpu":"1","memory":"512"},"requests":{"cpu":"250m","memory":"256"}},
"volumeMounts":[{"name":"config","mountPath":"/etc/%[1]s","readOnly":true}],
"livenessProbe":{"path":"/healthz","port":8080,"periodSeconds":10,"failureThreshold":3}}],
"nodeName":"node-%[6]d","terminationGracePeriodSeconds":30},
"status":{"phase":"Running","podIP":"10.1.%[3]d.%[2]d","startTime":"%[5]s",
"conditions":[{"type":"Initialized","status":"True","lastTransitionTime":"%[5]s"},{"type":"Ready","status":"True","lastTransitionTime":"%[5]s"},{"type":"PodScheduled","status":"True","lastTransitionTime":"%[5]s"}],
"containerStatuses":[{"name":"%[1]s","image":"registry.example.com/%[1]s:v1.%[3]d","containerID":"containerd://%[3]d-%[2]d","ready":true}]}}`,
		app, r, d, 1000+d*1000+r, ts, (d*7+r)%10)
}

func decodePod(t testing.TB, data []byte) *sPod {
	t.Helper()
	p := new(sPod)
	if err := json.Unmarshal(data, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func mapPtr[K comparable, V any](m map[K]V) unsafe.Pointer { return mapPointer(m) }

func sliceData[E any](s []E) *E { return unsafe.SliceData(s) }

func TestSharingSharesWhatPodsOfADeploymentHaveInCommon(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	a := shareObject(s, decodePod(t, deploymentPodJSON(1, 1)))
	b := shareObject(s, decodePod(t, deploymentPodJSON(1, 2)))
	other := shareObject(s, decodePod(t, deploymentPodJSON(2, 1)))

	// The decoded content is unchanged.
	want := decodePod(t, deploymentPodJSON(1, 2))
	if !reflect.DeepEqual(want, b) {
		t.Fatalf("sharing changed the object:\n got %+v\nwant %+v", b, want)
	}

	shared := map[string]bool{
		"labels":             mapPtr(a.Labels) == mapPtr(b.Labels),
		"annotations":        mapPtr(a.Annotations) == mapPtr(b.Annotations),
		"ownerReferences":    sliceData(a.OwnerReferences) == sliceData(b.OwnerReferences),
		"volumes":            sliceData(a.Spec.Volumes) == sliceData(b.Spec.Volumes),
		"containers":         sliceData(a.Spec.Containers) == sliceData(b.Spec.Containers),
		"gracePeriod":        a.Spec.TerminationGracePeriodSeconds == b.Spec.TerminationGracePeriodSeconds,
		"namespace":          sameString(a.Namespace, b.Namespace),
		"generateName":       sameString(a.GenerateName, b.GenerateName),
		"phase":              sameString(a.Status.Phase, b.Status.Phase),
		"condition type":     sameString(a.Status.Conditions[0].Type, b.Status.Conditions[0].Type),
		"status image":       sameString(a.Status.ContainerStatuses[0].Image, b.Spec.Containers[0].Image),
		"kind":               sameString(a.Kind, other.Kind),
		"env across deploys": sliceData(a.Spec.Containers[0].Env) == sliceData(other.Spec.Containers[0].Env),
		"probe across":       a.Spec.Containers[0].Probe == other.Spec.Containers[0].Probe,
		"ports across":       sliceData(a.Spec.Containers[0].Ports) == sliceData(other.Spec.Containers[0].Ports),
		"limits across":      mapPtr(a.Spec.Containers[0].Resources.Limits) == mapPtr(other.Spec.Containers[0].Resources.Limits),
		"args across":        sliceData(a.Spec.Containers[0].Args) == sliceData(other.Spec.Containers[0].Args),
	}
	for what, ok := range shared {
		if !ok {
			t.Errorf("%s: not shared", what)
		}
	}
	// What differs is not shared.
	if mapPtr(a.Labels) == mapPtr(other.Labels) || sliceData(a.Spec.Containers) == sliceData(other.Spec.Containers) {
		t.Error("two deployments' labels or containers are one value")
	}
	if sliceData(a.Status.ContainerStatuses) == sliceData(b.Status.ContainerStatuses) || a.Status.PodIP == b.Status.PodIP {
		t.Error("per-pod status shared")
	}
	if st := s.stats(); st.Hits == 0 || st.SavedBytes == 0 || st.Entries == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestSharingTrimsSlicesAndKeepsNilAndEmptyApart(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	p := decodePod(t, deploymentPodJSON(3, 1))
	if env := p.Spec.Containers[0].Env; cap(env) == len(env) {
		t.Fatalf("decoded env has no spare capacity (len %d cap %d): the test needs some", len(env), cap(env))
	}
	p.Spec.Containers[0].Ports = []sPort{}
	p.Spec.Containers[0].VolumeMounts = nil
	shareObject(s, p)
	if env := p.Spec.Containers[0].Env; cap(env) != len(env) {
		t.Errorf("env: len %d cap %d after sharing", len(env), cap(env))
	}
	if c := p.Status.Conditions; cap(c) != len(c) {
		t.Errorf("conditions: len %d cap %d after sharing", len(c), cap(c))
	}
	if p.Spec.Containers[0].Ports == nil || p.Spec.Containers[0].VolumeMounts != nil {
		t.Error("sharing turned an empty slice into nil or the other way round")
	}
}

func TestSharingUnexportedFieldsAreComparedNotChanged(t *testing.T) {
	type inner struct {
		Name string
		ptr  *int
	}
	type obj struct {
		meta.ObjectMeta
		A, B *inner
	}
	one, two := 1, 1
	s := newSharer(reflect.TypeFor[*obj]())
	x := shareObject(s, &obj{A: &inner{Name: "n", ptr: &one}, B: &inner{Name: "n", ptr: &two}})
	if x.A == x.B {
		t.Fatal("values whose unexported pointers differ were shared")
	}
	y := shareObject(s, &obj{A: &inner{Name: "n", ptr: &one}, B: &inner{Name: "n", ptr: &one}})
	if y.A != x.A || y.B != x.A {
		t.Fatal("values with the same unexported pointer were not shared")
	}
}

func TestSharingCanonicalValuesAreCollectedWithTheLastObjectHoldingThem(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	pods := []*sPod{shareObject(s, decodePod(t, deploymentPodJSON(4, 1))), shareObject(s, decodePod(t, deploymentPodJSON(4, 2)))}
	labels := weak.Make((*byte)(mapPtr(pods[0].Labels)))
	containers := weak.Make(sliceData(pods[0].Spec.Containers))
	if labels.Value() == nil || containers.Value() == nil {
		t.Fatal("weak pointers dead while the pods are alive")
	}
	entries := s.sweep()
	// One pod goes: its values live on in the other.
	pods[0] = nil
	runtime.GC()
	if labels.Value() == nil || containers.Value() == nil {
		t.Fatal("shared values freed while a pod still holds them")
	}
	runtime.KeepAlive(pods)
	// The last one goes (deleted from the cache): nothing keeps its values, not the table.
	pods = nil
	for range 3 {
		runtime.GC()
	}
	if labels.Value() != nil || containers.Value() != nil {
		t.Fatal("the sharer's table keeps deleted objects' values alive")
	}
	if left := s.sweep(); left >= entries || left > 10 {
		t.Fatalf("%d table entries left after the sweep (%d before): dead entries are not dropped", left, entries)
	}
	// A new pod of the same deployment starts a new canonical set.
	p := shareObject(s, decodePod(t, deploymentPodJSON(4, 3)))
	q := shareObject(s, decodePod(t, deploymentPodJSON(4, 4)))
	if mapPtr(p.Labels) != mapPtr(q.Labels) {
		t.Fatal("no sharing after the earlier canonical values were collected")
	}
}

func TestSharingStopsLookingUpUniqueValues(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	const n = 12000
	keep := make([]*sPod, 0, n)
	for i := range n {
		keep = append(keep, shareObject(s, decodePod(t, deploymentPodJSON(i/2000, i%2000))))
	}
	// Every pod has a unique name, uid, resourceVersion, IP and container ID; a table entry
	// for each would cost more than sharing them saves. Only the probe windows (a few
	// hundred values, ever sparser) get entries.
	interned := func(str string) bool {
		c, n := s.lookup(shareKey{keyString, maphash.String(s.seed, str)})
		return c == unsafe.Pointer(unsafe.StringData(str)) && n == len(str)
	}
	var names, ips int
	for _, p := range keep {
		if interned(p.Name) {
			names++
		}
		if interned(p.Status.PodIP) {
			ips++
		}
	}
	if names > n/25 || ips > n/25 {
		t.Fatalf("%d pod names and %d pod IPs of %d interned: unique values are still being looked up", names, ips, n)
	}
	if names == 0 {
		t.Fatal("no pod name interned: the site was never probed")
	}
	a, b := keep[n-2], keep[n-1]
	if mapPtr(a.Labels) != mapPtr(b.Labels) || !sameString(a.Namespace, b.Namespace) {
		t.Fatal("shared values no longer shared")
	}
	if st := s.stats(); st.Entries > n/5 {
		t.Fatalf("%d table entries for %d pods (%+v)", st.Entries, n, st)
	}
}

func TestSharingMutatingASharedValueDoesNotSpreadToNewObjects(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	a := shareObject(s, decodePod(t, deploymentPodJSON(5, 1)))
	b := shareObject(s, decodePod(t, deploymentPodJSON(5, 2)))
	// Forbidden (cached objects are read-only), and this is why: the other pod sees it.
	a.Labels["app"] = "mutated"
	if b.Labels["app"] != "mutated" {
		t.Fatal("labels were not shared")
	}
	// But objects shared later are compared by content and get their own copy.
	c := shareObject(s, decodePod(t, deploymentPodJSON(5, 3)))
	if c.Labels["app"] != "app-5" || mapPtr(c.Labels) == mapPtr(a.Labels) {
		t.Fatalf("a later pod got the mutated labels %v", c.Labels)
	}
}

func TestSharingConstantAndStaticValues(t *testing.T) {
	// Strings and interface boxes in read-only memory (constants) can be shared: the
	// sharer keeps its own copy as the canonical one.
	type obj struct {
		meta.ObjectMeta
		S string
		A any
		F any
	}
	s := newSharer(reflect.TypeFor[*obj]())
	x := shareObject(s, &obj{S: "constant", A: "boxed", F: 1.5})
	y := shareObject(s, &obj{S: "constant", A: "boxed", F: 1.5})
	if !sameString(x.S, y.S) {
		t.Fatal("constant strings not shared")
	}
	if (*eface)(unsafe.Pointer(&x.A)).data != (*eface)(unsafe.Pointer(&y.A)).data || x.A != "boxed" || y.F != 1.5 {
		t.Fatal("boxed values not shared")
	}
}

func TestSharingUnstructured(t *testing.T) {
	s := newSharer(reflect.TypeFor[*meta.Unstructured]())
	decode := func(d, r int) *meta.Unstructured {
		u := new(meta.Unstructured)
		if err := json.Unmarshal(deploymentPodJSON(d, r), u); err != nil {
			t.Fatal(err)
		}
		return shareObject(s, u)
	}
	a, b := decode(6, 1), decode(6, 2)
	want := decode(6, 2)
	if !reflect.DeepEqual(want.Object, b.Object) {
		t.Fatalf("sharing changed the object:\n got %v\nwant %v", b.Object, want.Object)
	}
	am, bm := a.Object["metadata"].(map[string]any), b.Object["metadata"].(map[string]any)
	if mapPtr(am["labels"].(map[string]any)) != mapPtr(bm["labels"].(map[string]any)) {
		t.Error("labels not shared")
	}
	ac := a.Object["spec"].(map[string]any)["containers"].([]any)
	bc := b.Object["spec"].(map[string]any)["containers"].([]any)
	if sliceData(ac) != sliceData(bc) {
		t.Error("containers not shared")
	}
	if (*eface)(unsafe.Pointer(&am)).data == (*eface)(unsafe.Pointer(&bm)).data {
		t.Error("per-pod metadata shared")
	}
}

// A recursive type, and a cyclic value: sharing stops at maxShareDepth.
type sNode struct {
	meta.ObjectMeta
	Name string
	Next *sNode
	Kids []sNode
}

func TestSharingRecursiveTypesAndCycles(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sNode]())
	mk := func() *sNode {
		return &sNode{Name: "root", Next: &sNode{Name: "leaf"}, Kids: []sNode{{Name: "k", Next: &sNode{Name: "leaf"}}}}
	}
	a, b := shareObject(s, mk()), shareObject(s, mk())
	if a.Next != b.Next || a.Next != a.Kids[0].Next || sliceData(a.Kids) != sliceData(b.Kids) {
		t.Fatal("recursive values not shared")
	}
	c := &sNode{Name: "cycle"}
	c.Next = &sNode{Name: "x", Next: c}
	shareObject(s, c) // must return
	if c.Next.Next != c {
		t.Fatal("a cyclic value was changed")
	}
}

func TestSharingPlansAreCompiledOncePerType(t *testing.T) {
	if sharePlanFor(reflect.TypeFor[sPod]()) != sharePlanFor(reflect.TypeFor[sPod]()) {
		t.Fatal("two plans for one type")
	}
	p := sharePlanFor(reflect.TypeFor[sCondition]())
	// Type and Status are strings, shared; the time has only unexported fields (its
	// location pointer is compared by address), so nothing in it is shared.
	if len(p.fields) != 3 || p.fields[0].site == 0 || p.fields[2].site != 0 || p.fields[2].plan.refs {
		t.Fatalf("plan of sCondition: %+v", p.fields)
	}
}

// BenchmarkShare decodes pods of 20 deployments of 100 replicas and shares each right after
// decoding it, as the informer's transform does; op=decode decodes only. B/pod is the live
// heap per pod once all are held (the table included).
func BenchmarkShare(b *testing.B) {
	const deployments, replicas = 20, 100
	var data [][]byte
	for d := range deployments {
		for r := range replicas {
			data = append(data, deploymentPodJSON(d, r))
		}
	}
	for _, share := range []bool{false, true} {
		name := "op=decode"
		if share {
			name = "op=decode+share"
		}
		b.Run(name, func(b *testing.B) {
			var perPod float64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var m0 runtime.MemStats
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				s := newSharer(reflect.TypeFor[*sPod]())
				pods := make([]*sPod, 0, len(data))
				for _, d := range data {
					p := decodePod(b, d)
					if share {
						p = shareObject(s, p)
					}
					pods = append(pods, p)
				}
				b.StopTimer()
				runtime.GC()
				var m1 runtime.MemStats
				runtime.ReadMemStats(&m1)
				perPod = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(len(pods))
				runtime.KeepAlive(pods)
				runtime.KeepAlive(s)
				b.StartTimer()
			}
			b.ReportMetric(perPod, "B/pod")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(data)), "ns/pod")
		})
	}
}

// TestSharingNeverWritesValuesItAlreadyShared: an object entering the cache may be a cached
// object (a transform that returns one) or hold its values by reference (a transform that
// sets a package-level default). Sharing it must not write to them, not even the same
// reference back, because handlers read cached objects concurrently: under -race such a
// write is reported.
func TestSharingNeverWritesValuesItAlreadyShared(t *testing.T) {
	s := newSharer(reflect.TypeFor[*sPod]())
	a := shareObject(s, decodePod(t, deploymentPodJSON(1, 1)))
	probe, env := a.Spec.Containers[0].Probe, a.Spec.Containers[0].Env[1].ValueFrom

	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // a handler reading the cached object
		defer close(done)
		for n := 0; ; n += len(probe.Path) + len(env.FieldPath) + len(a.Labels["app"]) + len(a.Spec.Containers[0].Image) {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for r := 2; r < 50; r++ {
		// Another deployment's pod, so its containers are not equal to a's and are walked
		// field by field, but holding a's probe, env source and labels by reference.
		b := decodePod(t, deploymentPodJSON(2, r))
		b.Spec.Containers[0].Probe = probe
		b.Spec.Containers[0].Env[1].ValueFrom = env
		b.Labels = a.Labels
		b = shareObject(s, b)
		if r%2 == 0 { // and the cached object itself again, as a transform returning it would
			shareObject(s, a)
		}
		if b.Spec.Containers[0].Probe.Path != "/healthz" || b.Labels["app"] != "app-1" {
			t.Fatalf("pod %d: shared values changed: %+v %v", r, *b.Spec.Containers[0].Probe, b.Labels)
		}
	}
	close(stop)
	<-done
}

func TestStringReturnsTheCanonicalCopyWithoutAddingAny(t *testing.T) {
	s := New[*sPod]()
	p := decodePod(t, deploymentPodJSON(1, 1))
	s.Share(p)
	name := p.Spec.Containers[0].Image
	got := s.String([]byte(name))
	if !sameString(got, name) {
		t.Fatalf("String(%q) is not the canonical copy the sharer holds", name)
	}
	before := s.Stats()
	other := s.String([]byte("never-shared"))
	if other != "never-shared" || s.Stats().Entries != before.Entries {
		t.Fatalf("a string the sharer does not hold: %q, entries %d -> %d", other, before.Entries, s.Stats().Entries)
	}
	if s.String(nil) != "" {
		t.Fatal("String(nil) is not empty")
	}
}

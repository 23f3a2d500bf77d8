package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/informerkit/informerkit/deepcopy"
)

// BenchmarkDeepCopy copies the same object both ways: informerkit's reflection-compiled
// deepcopy.Copy against client-go's generated (*corev1.Pod).DeepCopy (obj=pod: a fleet pod
// with managedFields, as the informer benchmarks cache them), and against
// (*unstructured.Unstructured).DeepCopy for the same pod as a JSON object (obj=unstructured).
func BenchmarkDeepCopy(b *testing.B) {
	pod := fleetPod(7, 3, 10)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	var sinkPod *corev1.Pod
	var sinkU *unstructured.Unstructured
	b.Run("obj=pod/impl=informerkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkPod = deepcopy.Copy(pod)
		}
	})
	b.Run("obj=pod/impl=client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkPod = pod.DeepCopy()
		}
	})
	b.Run("obj=unstructured/impl=informerkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkU = deepcopy.Copy(u)
		}
	})
	b.Run("obj=unstructured/impl=client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkU = u.DeepCopy()
		}
	})
	_, _ = sinkPod, sinkU
}

// TestDeepCopyMatchesGenerated checks that both copies of the benchmark's pod are equal to
// the original, so the benchmark compares like with like.
func TestDeepCopyMatchesGenerated(t *testing.T) {
	pod := fleetPod(7, 3, 10)
	ours, theirs := deepcopy.Copy(pod), pod.DeepCopy()
	if !equality.Semantic.DeepEqual(ours, pod) || !equality.Semantic.DeepEqual(theirs, pod) {
		t.Fatal("copies differ from the original")
	}
}

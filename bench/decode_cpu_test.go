package bench

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/protodec"
	"github.com/informerkit/informerkit/internal/share"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestDecodePodCPU (INFORMERKIT_CPU_AB=1) compares the process CPU time (GC included) of
// decoding the recorded pod into *corev1.Pod, in 21 interleaved rounds of 2000 decodes:
// medians per decode. Wall-clock benchmarks are too noisy on a shared machine.
func TestDecodePodCPU(t *testing.T) {
	if os.Getenv("INFORMERKIT_CPU_AB") == "" {
		t.Skip("INFORMERKIT_CPU_AB is not set")
	}
	pb, js := readReal(t, "pod.pb"), readReal(t, "pod.json")
	jd := jsondec.NewDecoder(jsondec.Options{Omit: []string{"metadata", "managedFields"}})
	pd := protodec.NewDecoder(protodec.Options{OmitManagedFields: true})
	sh := share.New[*corev1.Pod]()
	ps := protodec.NewDecoder(protodec.Options{OmitManagedFields: true, Strings: sh.String})
	var keep []*corev1.Pod
	for range 10 {
		var p corev1.Pod
		if err := protodec.DecodeObject(ps, pb, &p); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, sh.Share(&p))
	}
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	variants := []struct {
		name string
		fn   func() error
	}{
		{"jsondec", func() error { var p corev1.Pod; return jd.Unmarshal(js, &p) }},
		{"protodec", func() error { var p corev1.Pod; return protodec.DecodeObject(pd, pb, &p) }},
		{"protodec-shared", func() error { var p corev1.Pod; return protodec.DecodeObject(ps, pb, &p) }},
		{"client-go", func() error { var p corev1.Pod; _, _, err := ser.Decode(pb, nil, &p); return err }},
	}
	res := make([][]float64, len(variants))
	for round := range 21 {
		for i := range variants {
			v := variants[(i+round)%len(variants)]
			c0 := processCPU()
			for range 2000 {
				if err := v.fn(); err != nil {
					t.Fatal(err)
				}
			}
			k := (i + round) % len(variants)
			res[k] = append(res[k], float64(processCPU()-c0)/2000/1000)
		}
	}
	for i, v := range variants {
		slices.Sort(res[i])
		fmt.Printf("%-16s %6.1f µs (p25 %.1f, p75 %.1f)\n", v.name, res[i][10], res[i][5], res[i][15])
	}
	_ = keep
}

package apitest

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (user and system): on a shared machine it
// varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreate measures a create through the write path with and without recording
// managedFields (tracked=false is how every write went before apitest kept them), for a
// configmap and a pod with two containers.
func BenchmarkCreate(b *testing.B) {
	pod := func(i int) map[string]any {
		var m map[string]any
		json.Unmarshal([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"default","labels":{"app":"web","pod-template-hash":"abc"}},`+
			`"spec":{"containers":[{"name":"app","image":"nginx:1","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],`+
			`"resources":{"requests":{"cpu":"100m","memory":"64Mi"}},"readinessProbe":{"httpGet":{"path":"/","port":80}}},{"name":"sidecar","image":"envoy:1"}]}}`, i)), &m)
		return m
	}
	cm := func(i int) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprint("c", i), "namespace": "default"}, "data": map[string]any{"k": "v"}}
	}
	for _, kind := range []struct {
		name, resource string
		obj            func(int) map[string]any
	}{{"configmap", "configmaps", cm}, {"pod", "pods", pod}} {
		for _, tracked := range []bool{false, true} {
			b.Run(fmt.Sprintf("kind=%s/tracked=%v", kind.name, tracked), func(b *testing.B) {
				s := NewServer()
				defer s.Close()
				r, err := s.resolve(kind.resource)
				if err != nil {
					b.Fatal(err)
				}
				wo := writeOptions{}
				if tracked {
					wo = goWrite()
				}
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; b.Loop(); i++ {
					s.mu.Lock()
					_, st := s.createLocked(r, "default", kind.obj(i), wo)
					s.mu.Unlock()
					if st != nil {
						b.Fatal(st)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

package informer

import (
	"fmt"
	"reflect"
	"testing"
)

func TestInformerCachesShareIdenticalParts(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableSharing=%v", disable), func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s)
			data := map[string]string{"config.yaml": "replicas: 3\nimage: registry.example.com/app:v1\n"}
			mkCM(t, s, "default", "a", data)
			mkCM(t, s, "default", "b", data)
			opts := fastOptions(t)
			opts.DisableSharing = disable
			inf := New(configMaps(c), opts)
			start(t, inf)
			wait(t, inf.Synced(), "sync")
			a, _ := inf.Lister().Get("default", "a")
			b, _ := inf.Lister().Get("default", "b")
			if a == nil || b == nil || !reflect.DeepEqual(a.Data, data) || !reflect.DeepEqual(b.Data, data) {
				t.Fatalf("cached %v and %v", a, b)
			}
			if shared := reflect.ValueOf(a.Data).UnsafePointer() == reflect.ValueOf(b.Data).UnsafePointer(); shared == disable {
				t.Fatalf("data maps shared: %v", shared)
			}
			if st := inf.Stats().Sharing; st.Enabled == disable || (!disable && st.Hits == 0) {
				t.Fatalf("Stats().Sharing = %+v", st)
			}
		})
	}
}

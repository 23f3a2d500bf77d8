package celrules

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/crschema"
)

// FuzzValidate evaluates widgetSchema's rules on any JSON object (pruned by the schema), and checks what must hold
// whatever the data: no panic, the same answer twice, and ratcheting — an update that
// changes nothing (old == new) fails no rule below the root, it may only fail to evaluate
// one. (The root is never ratcheted: the schema declares no metadata, so the server's
// pairing of old and new stops there, and real updates change metadata anyway.)
func FuzzValidate(f *testing.F) {
	f.Add(`{"metadata":{"name":"w-1"},"spec":{"min":1,"max":2,"mode":"a","name":"abc","tags":["a","b"]}}`)
	f.Add(`{"metadata":{"name":"x"},"spec":{"min":3,"max":2,"forbidden":"x","size":11,"labels":{"a":"long"}}}`)
	f.Add(`{"spec":{"ports":[{"port":0},{}],"size":"5","tags":["b","a","a"]}}`)
	f.Add(`{"spec":null}`)
	widget := mustDecode(widgetSchema)
	v := New(widget)
	f.Fuzz(func(t *testing.T, doc string) {
		d := json.NewDecoder(strings.NewReader(doc))
		d.UseNumber()
		var obj map[string]any
		if d.Decode(&obj) != nil || obj == nil {
			return
		}
		_ = crschema.Prune(obj, widget) // as the write path does before the rules run
		ctx := context.Background()
		errs, _ := v.Validate(ctx, obj, nil)
		again, _ := v.Validate(ctx, obj, nil)
		if !reflect.DeepEqual(errs, again) {
			t.Fatalf("two answers for one object:\n%v\n%v", errs, again)
		}
		same, _ := v.Validate(ctx, obj, obj)
		for _, e := range same {
			if e.Field != "<nil>" && !strings.Contains(e.Message, "evaluating rule") && !strings.Contains(e.Message, "no further validation rules") &&
				!strings.Contains(e.Message, "call arguments did not match") {
				t.Fatalf("an unchanged object fails a rule: %v", e)
			}
		}
	})
}

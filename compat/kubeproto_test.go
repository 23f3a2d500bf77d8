package compat

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// protoKind is a kind and an object of its Go type.
type protoKind struct {
	gvk schema.GroupVersionKind
	obj runtime.Object
}

// protoKinds are the kinds whose protobuf encoding kubeproto must match.
var protoKinds = []protoKind{
	{corev1.SchemeGroupVersion.WithKind("Pod"), &corev1.Pod{}},
	{corev1.SchemeGroupVersion.WithKind("PodList"), &corev1.PodList{}},
	{corev1.SchemeGroupVersion.WithKind("Namespace"), &corev1.Namespace{}},
	{corev1.SchemeGroupVersion.WithKind("ConfigMap"), &corev1.ConfigMap{}},
	{corev1.SchemeGroupVersion.WithKind("Secret"), &corev1.Secret{}},
	{corev1.SchemeGroupVersion.WithKind("Service"), &corev1.Service{}},
	{corev1.SchemeGroupVersion.WithKind("Event"), &corev1.Event{}},
	{corev1.SchemeGroupVersion.WithKind("PodTemplate"), &corev1.PodTemplate{}},
	{corev1.SchemeGroupVersion.WithKind("Binding"), &corev1.Binding{}},
	{appsv1.SchemeGroupVersion.WithKind("Deployment"), &appsv1.Deployment{}},
	{appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"), &appsv1.ReplicaSetList{}},
	{coordinationv1.SchemeGroupVersion.WithKind("Lease"), &coordinationv1.Lease{}},
	{eventsv1.SchemeGroupVersion.WithKind("Event"), &eventsv1.Event{}},
	{autoscalingv1.SchemeGroupVersion.WithKind("Scale"), &autoscalingv1.Scale{}},
	{policyv1.SchemeGroupVersion.WithKind("Eviction"), &policyv1.Eviction{}},
	{authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview"), &authorizationv1.SelfSubjectAccessReview{}},
	{authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectRulesReview"), &authorizationv1.SelfSubjectRulesReview{}},
	{metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"), &metav1.PartialObjectMetadataList{}},
	{metav1.SchemeGroupVersion.WithKind("Status"), &metav1.Status{}},
}

// filler makes random objects that encoding/json can write (IntOrString of a known type,
// canonical quantities, JSON raw extensions, times within years 0-9999).
func filler(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.2).NumElements(0, 2).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
		func(v *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				v.Raw = []byte(`{"apiVersion":"v1","kind":"X","n":1}`)
			}
		},
		func(v *metav1.FieldsV1, c randfill.Continue) {
			v.Raw = []byte(`{"f:metadata":{}}`)
		},
		func(t *metav1.Time, c randfill.Continue) {
			if c.Bool() {
				*t = metav1.Unix(c.Int63n(1<<33), 0).Rfc3339Copy()
			}
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			if c.Bool() {
				*t = metav1.NewMicroTime(time.Unix(c.Int63n(1<<33), c.Int63n(1e9)).Truncate(time.Microsecond))
			}
		},
		func(s *string, c randfill.Continue) {
			// Valid UTF-8 (JSON cannot hold anything else).
			*s = c.String(6)
		},
	)
}

// TestKubeprotoMatchesAPIMachinery checks kubeproto against k8s.io/apimachinery's protobuf
// serializer on random objects of every kind kubeproto's table serves: the bytes kubeproto
// encodes from an object's JSON are the bytes apimachinery encodes from the object, and
// kubeproto decodes apimachinery's bytes into the JSON encoding/json writes for the object.
func TestKubeprotoMatchesAPIMachinery(t *testing.T) {
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for _, k := range protoKinds {
		t.Run(k.gvk.Kind, func(t *testing.T) { checkKubeproto(t, ser, k.gvk, k.obj, 200) })
	}
}

// TestKubeprotoEveryServedKind runs TestKubeprotoMatchesAPIMachinery's check on every kind
// of kubeschema's table that client-go's scheme has (the kinds of every resource the
// kube-apiserver serves, and their lists), with fewer objects each.
func TestKubeprotoEveryServedKind(t *testing.T) {
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	n := 0
	for _, ki := range kubeschema.Kinds() {
		for _, kind := range []string{ki.Kind, ki.Kind + "List"} {
			gvk := schema.GroupVersionKind{Group: ki.Group, Version: ki.Version, Kind: kind}
			if (kind != ki.Kind && ki.List == nil) || ki.Group == "meta.k8s.io" || !scheme.Scheme.Recognizes(gvk) {
				continue
			}
			obj, err := scheme.Scheme.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			n++
			t.Run(ki.Group+"/"+ki.Version+"/"+kind, func(t *testing.T) { checkKubeproto(t, ser, gvk, obj, 20) })
		}
	}
	if n < 120 {
		t.Errorf("only %d kinds checked", n)
	}
}

// checkKubeproto encodes seeds random objects of a kind with apimachinery and compares
// kubeproto's decoding and encoding with it.
func checkKubeproto(t *testing.T, ser *protobuf.Serializer, gvk schema.GroupVersionKind, proto runtime.Object, seeds int) {
	k := protoKind{gvk, proto}
	for i := range seeds {
		obj := reflect.New(reflect.TypeOf(k.obj).Elem()).Interface().(runtime.Object)
		filler(int64(i)).Fill(obj)
		clearItemTypeMeta(obj)
		obj.GetObjectKind().SetGroupVersionKind(k.gvk)
		// The reference is the object as the server holds it after a protobuf round
		// trip (empty lists and maps become nil, as in any protobuf decode).
		var first bytes.Buffer
		if err := ser.Encode(obj, &first); err != nil {
			t.Fatalf("seed %d: apimachinery encode: %v", i, err)
		}
		obj = reflect.New(reflect.TypeOf(k.obj).Elem()).Interface().(runtime.Object)
		if _, _, err := ser.Decode(first.Bytes(), nil, obj); err != nil {
			t.Fatalf("seed %d: apimachinery decode: %v", i, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(k.gvk)
		var want bytes.Buffer
		if err := ser.Encode(obj, &want); err != nil {
			t.Fatalf("seed %d: apimachinery encode: %v", i, err)
		}
		js, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("seed %d: json: %v", i, err)
		}
		wantJSON := decodeJSON(t, js)

		got, err := kubeproto.DecodeObject(want.Bytes())
		if err != nil {
			t.Fatalf("seed %d: kubeproto decode: %v", i, err)
		}
		if d := cmp.Diff(wantJSON, got); d != "" {
			t.Fatalf("seed %d: kubeproto decoded %s differently from encoding/json (-json +kubeproto):\n%s", i, k.gvk.Kind, d)
		}

		// Encoding: kubeproto from the JSON must write what apimachinery writes for the
		// object that JSON unmarshals into (what a server does with a JSON request).
		fromJSON := reflect.New(reflect.TypeOf(k.obj).Elem()).Interface().(runtime.Object)
		if err := json.Unmarshal(js, fromJSON); err != nil {
			t.Fatalf("seed %d: json unmarshal: %v", i, err)
		}
		var wantEnc bytes.Buffer
		if err := ser.Encode(fromJSON, &wantEnc); err != nil {
			t.Fatalf("seed %d: apimachinery encode: %v", i, err)
		}
		enc, err := kubeproto.EncodeObject(wantJSON)
		if err != nil {
			t.Fatalf("seed %d: kubeproto encode: %v", i, err)
		}
		if !bytes.Equal(enc, wantEnc.Bytes()) {
			back := reflect.New(reflect.TypeOf(k.obj).Elem()).Interface().(runtime.Object)
			if _, _, err := ser.Decode(enc, nil, back); err != nil {
				t.Fatalf("seed %d: apimachinery cannot decode kubeproto's encoding: %v", i, err)
			}
			if !apiequality.Semantic.DeepEqual(back, fromJSON) {
				t.Fatalf("seed %d: kubeproto's encoding decodes to another object:\n%s", i, cmp.Diff(fromJSON, back))
			}
			t.Fatalf("seed %d: kubeproto's bytes differ from apimachinery's (same object):\n%x\n%x", i, enc, wantEnc.Bytes())
		}
	}
}

// clearItemTypeMeta empties the TypeMeta of list items (the protobuf message has no place
// for it; the real server omits it).
func clearItemTypeMeta(obj runtime.Object) {
	v := reflect.ValueOf(obj).Elem()
	items := v.FieldByName("Items")
	if !items.IsValid() {
		return
	}
	for i := 0; i < items.Len(); i++ {
		if tm := items.Index(i).FieldByName("TypeMeta"); tm.IsValid() {
			tm.Set(reflect.Zero(tm.Type()))
		}
	}
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

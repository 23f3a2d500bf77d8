package apierr

import (
	"testing"

	"github.com/informerkit/informerkit/meta"
)

func TestInvalidNamesEveryCause(t *testing.T) {
	st := Invalid("Deployment", "apps", "web", []FieldError{
		RequiredValue("spec.selector", ""),
		InvalidValue("spec.replicas", -1, "must be greater than or equal to 0"),
	})
	want := `Deployment.apps "web" is invalid: [spec.selector: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0]`
	if st.Code != 422 || st.Reason != meta.StatusReasonInvalid || st.Message != want {
		t.Fatalf("got %d %s %q", st.Code, st.Reason, st.Message)
	}
	if len(st.Details.Causes) != 2 || st.Details.Causes[0].Type != "FieldValueRequired" || st.Details.Causes[1].Field != "spec.replicas" {
		t.Fatalf("causes: %+v", st.Details.Causes)
	}
	one := Invalid("ConfigMap", "", "c", []FieldError{ForbiddenValue("data", "no")})
	if one.Message != `ConfigMap "c" is invalid: data: Forbidden: no` {
		t.Fatalf("one cause is not bracketed: %q", one.Message)
	}
}

func TestFieldErrorWording(t *testing.T) {
	for _, c := range []struct {
		got  FieldError
		want string
	}{
		{RequiredValue("f", "name or generateName is required"), "Required value: name or generateName is required"},
		{NotSupportedValue("spec.type", "X", "A", "B"), `Unsupported value: "X": supported values: "A", "B"`},
		{DuplicateValue("f", "a"), `Duplicate value: "a"`},
	} {
		if c.got.Message != c.want {
			t.Errorf("got %q, want %q", c.got.Message, c.want)
		}
	}
}

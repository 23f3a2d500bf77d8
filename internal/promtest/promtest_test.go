package promtest

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseRejectsBrokenText(t *testing.T) {
	for name, text := range map[string]string{
		"sample before HELP":  "x 1\n",
		"TYPE without HELP":   "# TYPE x counter\n",
		"empty line":          "# HELP x h\n# TYPE x counter\n\nx 1\n",
		"bad name":            "# HELP x h\n# TYPE x counter\n1x 1\n",
		"bad value":           "# HELP x h\n# TYPE x counter\nx one\n",
		"foreign sample":      "# HELP x h\n# TYPE x counter\ny 1\n",
		"histogram no suffix": "# HELP x h\n# TYPE x histogram\nx 1\n",
		"unterminated labels": "# HELP x h\n# TYPE x counter\nx{a=\"1\" 1\n",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("%s: Parse accepted %q", name, text)
		}
	}
}

func ExampleParse() {
	fams, err := Parse("# HELP jobs_total Jobs.\n# TYPE jobs_total counter\njobs_total{kind=\"a\"} 3\n")
	if err != nil {
		panic(err)
	}
	s := fams["jobs_total"].Samples[0]
	fmt.Println(fams["jobs_total"].Type, s.Labels["kind"], s.Value, strings.ToUpper(fams["jobs_total"].Help))
	// Output: counter a 3 JOBS.
}

package jsondec

import (
	"encoding/json"
	"testing"
)

func TestZooDocumentDecodesEveryMember(t *testing.T) {
	var z zoo
	if err := Unmarshal([]byte(zooDoc), &z); err != nil {
		t.Fatal(err)
	}
	var w zoo
	if err := json.Unmarshal([]byte(zooDoc), &w); err != nil {
		t.Fatal(err)
	}
	if z.S == "" || z.I64 == 0 || z.Fold != "fold" || z.Kelvin != "kelvin" || z.Case != "case" || z.Quoted != 42 ||
		z.QuotedP == nil || z.T.v != "T:text" || z.J.raw == "" || z.Time.IsZero() || z.Rec == nil || z.X != 3 ||
		len(z.MT) != 1 || z.Q.milli != 250000 || z.Y2 != 5 || z.W != "U" || z.Up != "u" {
		t.Fatalf("zoo document left members unset: %+v", z)
	}
}

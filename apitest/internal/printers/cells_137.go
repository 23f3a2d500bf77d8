package printers

import (
	"sort"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// The cells of what kube-apiserver 1.37 prints beyond 1.36: the kinds it added
// (certificates' ClusterTrustBundle and PodCertificateRequest, resource's DeviceTaintRule,
// storagemigration's StorageVersionMigration) and the columns it gave
// CustomResourceDefinitions (apiextensions' tableconvertor). A kind whose columns the
// recorded release does not list keeps Name and Age.
func init() {
	register("certificates.k8s.io/ClusterTrustBundle", map[string]cellFunc{"SignerName": strOr("<none>", "spec", "signerName")})
	register("certificates.k8s.io/PodCertificateRequest", map[string]cellFunc{
		"PodName": str("spec", "podName"), "ServiceAccountName": str("spec", "serviceAccountName"),
		"NodeName": str("spec", "nodeName"), "SignerName": str("spec", "signerName"),
		"State": func(o map[string]any, _ time.Time) any {
			state := "Pending" // Issued, Denied and Failed exclude each other
			for _, c := range jsonobj.ListAt(o, "status", "conditions") {
				switch t := jsonobj.Str(jsonobj.Map(c), "type"); t {
				case "Issued", "Denied", "Failed":
					state = t
				}
			}
			return state
		},
		"UnverifiedUserAnnotations": labelsAt("spec", "unverifiedUserAnnotations"),
	})
	register("resource.k8s.io/DeviceTaintRule", map[string]cellFunc{
		"Key": str("spec", "taint", "key"), "Value": str("spec", "taint", "value"),
		"Effect": str("spec", "taint", "effect"),
		"TimeAdded": func(o map[string]any, now time.Time) any {
			if s := jsonobj.StrAt(o, "spec", "taint", "timeAdded"); s != "" {
				return since(s, now)
			}
			return ""
		},
	})
	register("storagemigration.k8s.io/StorageVersionMigration", map[string]cellFunc{
		"Name": str("metadata", "name"), // a column without format "name"
		"Resource": func(o map[string]any, _ time.Time) any {
			gr := jsonobj.StrAt(o, "spec", "resource", "resource")
			if g := jsonobj.StrAt(o, "spec", "resource", "group"); g != "" {
				gr += "." + g
			}
			return gr
		},
		"Status": func(o map[string]any, _ time.Time) any {
			status := "Unknown"
			for _, c := range jsonobj.ListAt(o, "status", "conditions") {
				cm := jsonobj.Map(c)
				switch t := jsonobj.Str(cm, "type"); {
				case jsonobj.Str(cm, "status") != "True":
				case t == "Running" || t == "Failed" || t == "Succeeded":
					status = t
				}
			}
			return status
		},
	})
	register("apiextensions.k8s.io/CustomResourceDefinition", map[string]cellFunc{
		"Scope": str("spec", "scope"),
		"Versions": func(o map[string]any, _ time.Time) any {
			var vs []string
			for _, v := range jsonobj.ListAt(o, "spec", "versions") {
				vm := jsonobj.Map(v)
				if served, _ := vm["served"].(bool); !served {
					continue
				}
				label := jsonobj.Str(vm, "name")
				if storage, _ := vm["storage"].(bool); storage {
					label += "(storage)"
				}
				vs = append(vs, label)
			}
			sort.Strings(vs)
			return strings.Join(vs, ",")
		},
		"Group": str("spec", "group"), "Kind": str("spec", "names", "kind"),
		"ShortNames": func(o map[string]any, _ time.Time) any {
			var names []string
			for _, n := range jsonobj.ListAt(o, "spec", "names", "shortNames") {
				s, _ := n.(string)
				names = append(names, s)
			}
			return strings.Join(names, ",")
		},
		"Established": func(o map[string]any, _ time.Time) any {
			s, _, _ := conditionStatus(jsonobj.ListAt(o, "status", "conditions"), "Established")
			return s == "True"
		},
	})
}

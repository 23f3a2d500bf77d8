// Command kubectl is kubectl v1.37 (k8s.io/kubectl at the version compat's go.mod pins),
// built so that the compat tests also run the kubectl of the kube-apiserver's release, next
// to whatever kubectl is on PATH.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err) // prints as kubectl does, and exits 1
	}
	os.Exit(0)
}

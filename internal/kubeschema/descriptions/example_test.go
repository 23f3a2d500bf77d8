package descriptions_test

import (
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/internal/kubeschema/descriptions"
)

func Example() {
	d := descriptions.Field("io.k8s.api.apps.v1.DeploymentSpec", "replicas")
	fmt.Println(strings.SplitN(d, ".", 2)[0])
	// Output: Number of desired pods
}

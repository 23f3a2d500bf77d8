package controller_test

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Secret is another kind of the example, to go past the budget with.
type Secret struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var _ = kinds.MustRegister[*Secret](kinds.Secret)

// A Manager with an informer budget: the inventory lists the one informer allowed and who
// acquired it, and a second one is refused.
func ExampleManager_Inventory() {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{
		Logger:         slog.New(slog.DiscardHandler),
		InformerBudget: controller.InformerBudget{MaxInformers: 1},
	})
	if err != nil {
		panic(err)
	}
	if _, err := controller.InformerFor[*ConfigMap](mgr); err != nil {
		panic(err)
	}
	_, err = controller.InformerFor[*Secret](mgr)
	fmt.Println(errors.Is(err, controller.ErrInformerBudget))
	for _, i := range mgr.Inventory() { // also served as JSON on /debug/informers
		fmt.Println(i.Name, i.Type, i.AcquiredBy)
	}
	// Output:
	// true
	// configmaps.v1 *controller_test.ConfigMap [InformerFor]
}

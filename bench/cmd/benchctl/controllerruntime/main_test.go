package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/bench/internal/ctlbench/ctltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConverges(t *testing.T) { ctltest.Converges(t, run) }

package jsondec

import "unsafe"

func stringData(s string) *byte { return unsafe.StringData(s) }

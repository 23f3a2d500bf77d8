module github.com/informerkit/informerkit

go 1.26.0

require (
	github.com/gorilla/websocket v1.5.3
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/time v0.16.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/kr/text v0.2.0 // indirect
)

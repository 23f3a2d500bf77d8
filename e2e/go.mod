module github.com/informerkit/informerkit/e2e

go 1.26.0

replace github.com/informerkit/informerkit => ../

require github.com/informerkit/informerkit v0.0.0-00010101000000-000000000000

require (
	cel.dev/expr v0.24.0 // indirect
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/google/cel-go v0.26.0 // indirect
	github.com/stoewer/go-strcase v1.2.0 // indirect
	golang.org/x/exp v0.0.0-20230515195305-f3d0a9c9a5cc // indirect
	golang.org/x/text v0.22.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20240826202546-f6391c0de4c7 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240826202546-f6391c0de4c7 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)

require (
	github.com/gorilla/websocket v1.5.3
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/time v0.16.0 // indirect
)

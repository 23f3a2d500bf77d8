module github.com/informerkit/informerkit/docs/dashboard

go 1.26.0

replace github.com/informerkit/informerkit => ../..

require (
	github.com/informerkit/informerkit v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	golang.org/x/image v0.48.0
)

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

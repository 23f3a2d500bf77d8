// Package apiclient is informerkit's hand-written Kubernetes API client: the object model
// (TypeMeta, ObjectMeta, List, Status, Unstructured), configuration (kubeconfig and
// in-cluster), transport and authentication, the REST verbs, List and Watch (chunked HTTP and
// WebSocket), and discovery.
//
// Objects are user-declared structs that embed TypeMeta and ObjectMeta and declare only the
// fields a controller reads; decoding skips everything else, which is how informerkit's caches
// stay small. It plays the role of client-go's rest, kubernetes, dynamic, discovery and
// tools/clientcmd packages and apimachinery's meta/v1 types.
package apiclient

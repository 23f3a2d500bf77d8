// Package meta is informerkit's object model: what every Kubernetes object and answer is
// made of, with no behaviour that needs a server.
//
//   - TypeMeta, ObjectMeta, OwnerReference and Time: embed TypeMeta and ObjectMeta (tag
//     json:"metadata") in a struct that declares only the fields a controller reads.
//   - List[T] and ListMeta: a page of a LIST.
//   - Status: the API server's answer to a failed request, which is an error; IsNotFound,
//     IsConflict, IsResourceExpired and the other predicates test an error's Status.
//   - Unstructured and the Nested* helpers: objects of any kind as JSON-shaped maps.
//   - The field types a custom resource needs: LabelSelector (validated in the API
//     server's words, FieldErrors, and turned into a labels.Selector), Duration and
//     IntOrString (a count or a percentage, ScaledValue).
//   - GroupVersion, GroupVersionKind, GroupVersionResource.
//   - Object, MetaObject and Accessor: the getters and setters the stages and the
//     controller helpers rely on.
//
// It plays the role of apimachinery's meta/v1, api/errors, runtime/schema and
// apis/meta/v1/unstructured and util/intstr packages. Every stage of informerkit imports it;
// it imports only package labels.
package meta

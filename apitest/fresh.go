package apitest

import (
	"encoding/json"
	"net"
	"strconv"
)

// What a fresh kube-apiserver creates itself, as the field manager "kube-apiserver": the
// system namespaces (its system namespaces controller) and the kubernetes Service in default
// (its kubernetes service controller), whose port 443 "https" targets the server's port.

// systemManager is the field manager of the objects the server creates itself.
const systemManager = "kube-apiserver"

// systemNamespaces are the namespaces of a fresh cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// kubernetesServiceIP is the kubernetes Service's cluster IP: the first of the service
// range (10.0.0.0/24, as the e2e cluster's).
const kubernetesServiceIP = "10.0.0.1"

func (s *Server) createSystemObjects(addr net.Addr) error {
	for _, ns := range systemNamespaces {
		if err := s.createSystem("namespaces", "", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	port := 443
	if _, p, err := net.SplitHostPort(addr.String()); err == nil {
		port, _ = strconv.Atoi(p)
	}
	svc := map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "kubernetes", "namespace": "default",
			"labels": map[string]any{"component": "apiserver", "provider": "kubernetes"}},
		"spec": map[string]any{"type": "ClusterIP", "clusterIP": kubernetesServiceIP, "sessionAffinity": "None",
			"ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
			"ports": []any{map[string]any{"name": "https", "protocol": "TCP", "port": json.Number("443"),
				"targetPort": json.Number(strconv.Itoa(port))}}}}
	return s.createSystem("services", "default", svc)
}

// createSystem creates an object as the server itself does.
func (s *Server) createSystem(resource, ns string, obj map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.resources[resource]
	_, st := s.createLocked(r, ns, obj, writeOptions{track: true, manager: systemManager, fieldManagerParam: systemManager})
	if st != nil {
		return st
	}
	return nil
}

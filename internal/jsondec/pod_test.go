package jsondec

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// A pod as a user of informerkit would declare it in full (the fields kube-apiserver
// writes for the recorded pods), with the custom-decoded types Kubernetes uses: times,
// quantities and int-or-strings decode through UnmarshalJSON.

type kTime struct{ time.Time }

func (t *kTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' {
		return errors.New("time is not a string")
	}
	p, err := time.Parse(time.RFC3339, string(b[1:len(b)-1]))
	t.Time = p
	return err
}

type kQuantity struct{ s string }

func (q *kQuantity) UnmarshalJSON(b []byte) error {
	if len(b) > 1 && b[0] == '"' {
		q.s = string(b[1 : len(b)-1])
		return nil
	}
	q.s = string(b)
	return nil
}

type kIntOrString struct {
	IsString bool
	Int      int32
	Str      string
}

func (v *kIntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.IsString = true
		return json.Unmarshal(b, &v.Str)
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	v.Int = int32(n)
	return err
}

type kTypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

type kOwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

type kObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          kTime             `json:"creationTimestamp,omitzero"`
	DeletionTimestamp          *kTime            `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []kOwnerReference `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	ManagedFields              json.RawMessage   `json:"managedFields,omitempty"`
}

type kEnvVar struct {
	Name      string `json:"name"`
	Value     string `json:"value,omitempty"`
	ValueFrom *struct {
		FieldRef *struct {
			APIVersion string `json:"apiVersion,omitempty"`
			FieldPath  string `json:"fieldPath"`
		} `json:"fieldRef,omitempty"`
	} `json:"valueFrom,omitempty"`
}

type kProbe struct {
	HTTPGet *struct {
		Path   string       `json:"path,omitempty"`
		Port   kIntOrString `json:"port"`
		Scheme string       `json:"scheme,omitempty"`
	} `json:"httpGet,omitempty"`
	TCPSocket *struct {
		Port kIntOrString `json:"port"`
	} `json:"tcpSocket,omitempty"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	TimeoutSeconds      int32 `json:"timeoutSeconds,omitempty"`
	PeriodSeconds       int32 `json:"periodSeconds,omitempty"`
	SuccessThreshold    int32 `json:"successThreshold,omitempty"`
	FailureThreshold    int32 `json:"failureThreshold,omitempty"`
}

type kResourceList map[string]kQuantity

type kContainer struct {
	Name    string   `json:"name"`
	Image   string   `json:"image,omitempty"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Ports   []struct {
		Name          string `json:"name,omitempty"`
		ContainerPort int32  `json:"containerPort"`
		Protocol      string `json:"protocol,omitempty"`
	} `json:"ports,omitempty"`
	Env       []kEnvVar `json:"env,omitempty"`
	Resources struct {
		Limits   kResourceList `json:"limits,omitempty"`
		Requests kResourceList `json:"requests,omitempty"`
	} `json:"resources,omitempty"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		ReadOnly  bool   `json:"readOnly,omitempty"`
		MountPath string `json:"mountPath"`
	} `json:"volumeMounts,omitempty"`
	LivenessProbe            *kProbe `json:"livenessProbe,omitempty"`
	ReadinessProbe           *kProbe `json:"readinessProbe,omitempty"`
	TerminationMessagePath   string  `json:"terminationMessagePath,omitempty"`
	TerminationMessagePolicy string  `json:"terminationMessagePolicy,omitempty"`
	ImagePullPolicy          string  `json:"imagePullPolicy,omitempty"`
}

type kVolume struct {
	Name      string `json:"name"`
	ConfigMap *struct {
		Name        string `json:"name,omitempty"`
		DefaultMode *int32 `json:"defaultMode,omitempty"`
	} `json:"configMap,omitempty"`
	Projected *struct {
		Sources     []json.RawMessage `json:"sources"`
		DefaultMode *int32            `json:"defaultMode,omitempty"`
	} `json:"projected,omitempty"`
}

type kPod struct {
	kTypeMeta   `json:",inline"`
	kObjectMeta `json:"metadata"`
	Spec        struct {
		Volumes                       []kVolume    `json:"volumes,omitempty"`
		Containers                    []kContainer `json:"containers"`
		RestartPolicy                 string       `json:"restartPolicy,omitempty"`
		TerminationGracePeriodSeconds *int64       `json:"terminationGracePeriodSeconds,omitempty"`
		DNSPolicy                     string       `json:"dnsPolicy,omitempty"`
		ServiceAccountName            string       `json:"serviceAccountName,omitempty"`
		DeprecatedServiceAccount      string       `json:"serviceAccount,omitempty"`
		NodeName                      string       `json:"nodeName,omitempty"`
		SecurityContext               *struct{}    `json:"securityContext,omitempty"`
		SchedulerName                 string       `json:"schedulerName,omitempty"`
		Tolerations                   []struct {
			Key               string `json:"key,omitempty"`
			Operator          string `json:"operator,omitempty"`
			Effect            string `json:"effect,omitempty"`
			TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
		} `json:"tolerations,omitempty"`
		Priority           *int32  `json:"priority,omitempty"`
		EnableServiceLinks *bool   `json:"enableServiceLinks,omitempty"`
		PreemptionPolicy   *string `json:"preemptionPolicy,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase,omitempty"`
		Conditions []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			LastProbeTime      kTime  `json:"lastProbeTime,omitempty"`
			LastTransitionTime kTime  `json:"lastTransitionTime,omitempty"`
		} `json:"conditions,omitempty"`
		HostIP            string                `json:"hostIP,omitempty"`
		HostIPs           []struct{ IP string } `json:"hostIPs,omitempty"`
		PodIP             string                `json:"podIP,omitempty"`
		PodIPs            []struct{ IP string } `json:"podIPs,omitempty"`
		StartTime         *kTime                `json:"startTime,omitempty"`
		ContainerStatuses []struct {
			Name  string `json:"name"`
			State struct {
				Running *struct {
					StartedAt kTime `json:"startedAt,omitempty"`
				} `json:"running,omitempty"`
			} `json:"state,omitempty"`
			LastState    json.RawMessage `json:"lastState,omitempty"`
			Ready        bool            `json:"ready"`
			RestartCount int32           `json:"restartCount"`
			Image        string          `json:"image"`
			ImageID      string          `json:"imageID"`
			ContainerID  string          `json:"containerID,omitempty"`
			Started      *bool           `json:"started,omitempty"`
		} `json:"containerStatuses,omitempty"`
		QOSClass string `json:"qosClass,omitempty"`
	} `json:"status,omitempty"`
}

// kPartialPod is what a controller that places pods declares: metadata and three fields.
type kPartialPod struct {
	kTypeMeta   `json:",inline"`
	kObjectMeta `json:"metadata"`
	Spec        struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
		PodIP string `json:"podIP"`
	} `json:"status"`
}

// kNothing declares no member: decoding it only checks and skips.
type kNothing struct{}

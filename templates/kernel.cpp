// {{ header }}
//
{{ summary }}
#include "{{ body_header }}"

{{ signature }}) {
    KERNEL_TASK_TYPE_DEFAULT({{ kernel_type }});
{{ call }});
}

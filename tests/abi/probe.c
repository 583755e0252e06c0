/*
 * tests/abi/probe.c: the plugin-facing ABI as one function abidw can see.
 * A plugin's ABI with the host is not in liballoy's exported functions
 * (the host hands its table over by pointer), so this probe, built -g as a
 * shared library against the headers under test, exports one function per
 * header whose parameters reach every struct and enum that crosses the
 * plugin boundary. tests/abidiff.sh compares its ABI with the baseline in
 * tests/abi/plugin.abi (docs/release.md).
 */
#include "alloy/kernel_table.h"
#include "alloy/plugin.h"

#define PROBE_EXPORT __attribute__((visibility("default")))

PROBE_EXPORT void alloy_abi_probe_plugin(const alloy_host_api *host, const alloy_plugin_api *api,
                                         const alloy_device_info *device,
                                         const alloy_compile_options *compile,
                                         const alloy_tensor *tensor, const alloy_execute_args *args,
                                         const alloy_compat_info *compat, const alloy_option *option,
                                         const alloy_ext *ext, const alloy_ext_stream *stream,
                                         alloy_error_code code, alloy_log_level level,
                                         alloy_device_kind kind, alloy_dtype dtype);
PROBE_EXPORT void alloy_abi_probe_kernel_table(const alloy_kernel_table *table,
                                               const alloy_kernel *kernel,
                                               const alloy_kernel_tensor *tensor,
                                               const alloy_kernel_call *call);

void alloy_abi_probe_plugin(const alloy_host_api *host, const alloy_plugin_api *api,
                            const alloy_device_info *device, const alloy_compile_options *compile,
                            const alloy_tensor *tensor, const alloy_execute_args *args,
                            const alloy_compat_info *compat, const alloy_option *option,
                            const alloy_ext *ext, const alloy_ext_stream *stream,
                            alloy_error_code code, alloy_log_level level, alloy_device_kind kind,
                            alloy_dtype dtype) {
  (void)host, (void)api, (void)device, (void)compile, (void)tensor, (void)args, (void)compat;
  (void)option, (void)ext, (void)stream, (void)code, (void)level, (void)kind, (void)dtype;
}

void alloy_abi_probe_kernel_table(const alloy_kernel_table *table, const alloy_kernel *kernel,
                                  const alloy_kernel_tensor *tensor, const alloy_kernel_call *call) {
  (void)table, (void)kernel, (void)tensor, (void)call;
}

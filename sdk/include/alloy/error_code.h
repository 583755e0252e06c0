/*
 * alloy/error_code.h: the error codes and the opaque error type, all that
 * the plugin ABI (alloy/plugin.h) needs of errors. A plugin makes, reads
 * and frees errors through the host table (host->error_new, error_message,
 * error_free), never through liballoy, so this header declares no
 * function. Applications include alloy/error.h, which adds liballoy's error
 * functions to this.
 *
 * The enum values are part of the ABI: they never change, and new codes
 * are only appended (a minor change), so a reader must expect codes newer
 * than its headers (docs/abi.md, "Reading across minors").
 */
#ifndef ALLOY_ERROR_CODE_H
#define ALLOY_ERROR_CODE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum alloy_error_code {
  ALLOY_ERR_INVALID_ARGUMENT = 1, /* the caller passed something malformed     */
  ALLOY_ERR_PARSE = 2,            /* text input (schema, .air, JSON) is wrong    */
  ALLOY_ERR_TYPE = 3,             /* dtype or shape check failed                 */
  ALLOY_ERR_NOT_FOUND = 4,        /* unknown op, file, symbol or backend         */
  ALLOY_ERR_UNSUPPORTED = 5,      /* well-formed but outside what is supported   */
  ALLOY_ERR_IO = 6,               /* the operating system refused a read/write   */
  ALLOY_ERR_OUT_OF_MEMORY = 7,
  ALLOY_ERR_INTERNAL = 8,         /* a bug where the error was made (Alloy, or
                                   * the plugin its message names; a plugin
                                   * breaking the ABI's rules), or a device
                                   * error with no better code; docs/abi.md   */
  ALLOY_ERR_VERSION = 9,          /* versions do not match: serialized bytes
                                   * (executable_deserialize, the compile
                                   * cache) from another plugin version or
                                   * device model. A plugin of another ABI
                                   * major is refused at load, by its status
                                   * line, not with this code                 */
  /* since ABI 1.2 */
  ALLOY_ERR_DEVICE_LOST = 10,     /* the device failed or went away: its backend
                                   * is unusable until reopened                 */
  ALLOY_ERR_CANCELLED = 11,       /* the work was cancelled before it finished   */
  ALLOY_ERR_UNAVAILABLE = 12,     /* a resource is busy or exhausted for now
                                   * (device memory, a queue): retrying may work */
  ALLOY_ERR_DECLINED = 13,        /* compile: the plugin will not take this
                                   * partition after all; the host falls back to
                                   * the next backend that claims its nodes     */
} alloy_error_code;

/* An error: a code and a message. Opaque; NULL means success. Immutable
 * once made, so it may be read from any thread; freeing it is its owner's
 * business alone. */
typedef struct alloy_error alloy_error;

#ifdef __cplusplus
}
#endif
#endif

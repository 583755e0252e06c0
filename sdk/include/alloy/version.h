/*
 * alloy/version.h: the version of Alloy's library (liballoy) and tools.
 *
 * MAJOR is the SONAME's number (liballoy.so.MAJOR): it changes only when
 * the library's C API or the plugin ABI breaks (ALLOY_ABI_MAJOR, in
 * alloy/plugin.h, changes with it). MINOR grows when functions, entries or
 * fields are added; PATCH for fixes alone. The Makefile reads these lines
 * for the shared library's file name, its symbol version and alloy.pc;
 * docs/release.md says when and how to bump them.
 */
#ifndef ALLOY_VERSION_H
#define ALLOY_VERSION_H

#define ALLOY_VERSION_MAJOR 1
#define ALLOY_VERSION_MINOR 3
#define ALLOY_VERSION_PATCH 0
#define ALLOY_VERSION_STRING "1.3.0"

#endif

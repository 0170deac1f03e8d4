// libgettextpo is built without frame pointers, so ASan's fast unwinder loses the frames of what it allocates,
// and lsan.supp's entry for its documented leak (a catalog it was parsing when we leave a fatal error with
// longjmp: po_file_read_v3) could not match. Programs that read PO catalogs take the slow unwinder on malloc
// by default; ASAN_OPTIONS from the environment still decides everything else.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() {
    return "fast_unwind_on_malloc=0";
}
#endif

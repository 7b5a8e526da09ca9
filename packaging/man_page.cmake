# cmake -DPROGRAM=path/to/program -DPAGE=build/man/NAME.1 -P man_page.cmake
# Writes PROGRAM's manual page (its --help-man) to PAGE and, compressed as Debian wants it, PAGE.gz.
execute_process(COMMAND ${PROGRAM} --help-man OUTPUT_VARIABLE page ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT page MATCHES "^\\.TH ")
  message(FATAL_ERROR "${PROGRAM} --help-man printed no manual page (exit status ${rc}): ${err}\n"
                      "Every packaged program prints its own: graphfs::AddManPageFlag(app) before parsing "
                      "(common/cli_manpage.h).")
endif()
file(WRITE ${PAGE}.tmp "${page}")
file(RENAME ${PAGE}.tmp ${PAGE})
execute_process(COMMAND gzip -9 -n -c ${PAGE} OUTPUT_FILE ${PAGE}.gz RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${PAGE} failed (exit status ${rc})")
endif()

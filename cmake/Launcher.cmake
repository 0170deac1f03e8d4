# dragoman_launcher(NAME PROGRAM): the command NAME is a small launcher (app/launcher/launcher_main.cpp) that sets
# the allocator's tunables and then executes the target PROGRAM, which is built as NAME in lib/dragoman of the
# build tree and installed as NAME in the library directory's dragoman folder (beside the engine's libraries and
# libdragoman_spm.so).
function(dragoman_launcher name program)
    # Beside the engine's libraries (engine/CMakeLists.txt), which it finds relative to itself.
    set_target_properties(${program} PROPERTIES OUTPUT_NAME ${name}
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/dragoman
                          INSTALL_RPATH "\$ORIGIN" BUILD_WITH_INSTALL_RPATH ON)
    dragoman_use_standins(${program} PROGRAM)
    add_executable(${name} ${PROJECT_SOURCE_DIR}/app/launcher/launcher_main.cpp)
    set_target_properties(${name} PROPERTIES AUTOMOC OFF)
    target_compile_definitions(${name} PRIVATE
        DRAGOMAN_PROGRAM_IN_BUILD="../lib/dragoman/${name}"
        DRAGOMAN_PROGRAM_INSTALLED="../${CMAKE_INSTALL_LIBDIR}/dragoman/${name}")
    add_dependencies(${name} ${program})
    dragoman_warnings(${name})
    install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR}/dragoman)
endfunction()

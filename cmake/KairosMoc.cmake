# kairos_moc(<target> <file>...): runs Qt's moc on each file, which declares Q_OBJECT.
#   a header x.h  -> moc_x.cpp, compiled into the target;
#   a source x.cpp -> x.moc, which x.cpp includes at its end.
#
# Written by hand instead of CMake's AUTOMOC because AUTOMOC hands moc the target's include
# paths, and moc then preprocesses every header it can reach (about 800 for a test: the
# standard library, Qt, Eigen): about 2 s a file, where the file alone takes 15 ms, and the
# output is the same (every moc output of the tree compared, only moc's own #include lines
# differ). Over a build that was some 10 % of its compile time. moc still gets the target's
# definitions (its #if blocks read them).
#
# A Q_OBJECT file not listed here fails at link time ("undefined reference to vtable" or
# "staticMetaObject"): add it to its target's kairos_moc call.
function(kairos_moc target)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_moc)
  set(includes "")
  set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  foreach(file IN LISTS ARGN)
    get_filename_component(abs ${file} ABSOLUTE)
    get_filename_component(name ${file} NAME_WE)
    get_filename_component(ext ${file} LAST_EXT)
    if(ext STREQUAL ".cpp")
      set(out ${dir}/${name}.moc)
    else()
      set(out ${dir}/moc_${name}.cpp)
    endif()
    add_custom_command(
      OUTPUT ${out}
      COMMAND Qt6::moc "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>" ${abs} -o ${out}
      DEPENDS ${abs} Qt6::moc
      COMMENT "moc ${file}"
      COMMAND_EXPAND_LISTS VERBATIM)
    target_sources(${target} PRIVATE ${out})
    set_source_files_properties(${out} PROPERTIES HEADER_FILE_ONLY ON)
    if(NOT ext STREQUAL ".cpp")
      string(APPEND includes "#include \"moc_${name}.cpp\"\n")
    endif()
  endforeach()
  # The headers' moc files compiled as one file, as AUTOMOC's mocs_compilation.cpp does (the
  # Qt headers they include parsed once).
  if(includes)
    file(CONFIGURE OUTPUT ${dir}/mocs_${target}.cpp CONTENT "${includes}")
    target_sources(${target} PRIVATE ${dir}/mocs_${target}.cpp)
    set_source_files_properties(${dir}/mocs_${target}.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  target_include_directories(${target} PRIVATE ${dir})
endfunction()

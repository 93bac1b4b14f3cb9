# Reading fenced code blocks out of Markdown, for the checks that keep the docs and the code one text.
include_guard(GLOBAL)

# `forkunion_markdown_block(<file> <marker> <language> <out>)`: the body of the first ```<language> block after the
# line `<marker>` (an HTML comment, invisible when rendered), without its fences. Fails if there is none.
function(forkunion_markdown_block file marker language out)
    file(READ "${file}" _text)
    string(FIND "${_text}" "${marker}\n" _at)
    if(_at EQUAL -1)
        message(FATAL_ERROR "${file} has no line '${marker}'")
    endif()
    string(SUBSTRING "${_text}" ${_at} -1 _text)
    string(FIND "${_text}" "```${language}\n" _open)
    if(_open EQUAL -1)
        message(FATAL_ERROR "${file} has no ```${language} block after '${marker}'")
    endif()
    string(LENGTH "```${language}\n" _fence)
    math(EXPR _open "${_open} + ${_fence}")
    string(SUBSTRING "${_text}" ${_open} -1 _text)
    string(FIND "${_text}" "\n```" _close)
    string(SUBSTRING "${_text}" 0 ${_close} _body)
    set(${out} "${_body}" PARENT_SCOPE)
endfunction()

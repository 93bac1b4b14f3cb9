! The Fortran spellings of the omp_* API as gfortran's omp_lib calls them, in a real Fortran program: team
! queries, the schedule, simple and nested locks (omp_lock_kind 4, omp_nest_lock_kind 8), a reduction, the
! affinity format's character arguments, integer(8) arguments, and a detached task whose event a later sibling
! fulfils (omp_fulfill_event takes the handle by value) before a task depending on it runs. Prints what must agree
! with libgomp.
program fortran_api
    use omp_lib
    implicit none
    integer :: team, total, i, kind, chunk, guarded, depth
    integer(omp_lock_kind) :: lock
    integer(omp_nest_lock_kind) :: nest
    integer(omp_sched_kind) :: schedule_kind
    integer(8) :: wide_chunk, wide_level
    character(len=64) :: format_text
    character(len=32) :: captured
    integer :: length
    integer(omp_event_handle_kind) :: event
    integer :: produced, consumed, fulfilled

    call report_server()
    call omp_set_num_threads(3)
    team = 0
    total = 0
!$omp parallel reduction(+:total)
!$omp master
    team = omp_get_num_threads()
!$omp end master
    total = total + omp_get_thread_num()
!$omp end parallel
    print '(a, i0, a, i0)', 'team ', team, ', thread numbers sum ', total

    call omp_set_schedule(omp_sched_guided, 4)
    call omp_get_schedule(schedule_kind, chunk)
    kind = schedule_kind
    print '(a, i0, a, i0)', 'schedule ', kind, ',', chunk
    call omp_set_schedule(omp_sched_dynamic, 7_8)
    call omp_get_schedule(schedule_kind, wide_chunk)
    print '(a, i0, a, i0)', 'schedule_8 ', schedule_kind, ',', wide_chunk

    call omp_init_lock(lock)
    call omp_init_nest_lock(nest)
    guarded = 0
    depth = 0
!$omp parallel do num_threads(2)
    do i = 1, 2000
        call omp_set_lock(lock)
        guarded = guarded + 1
        call omp_unset_lock(lock)
        call omp_set_nest_lock(nest)
        call omp_set_nest_lock(nest)
        depth = depth + 1
        call omp_unset_nest_lock(nest)
        call omp_unset_nest_lock(nest)
    end do
!$omp end parallel do
    print '(a, i0, a, i0, a, l1, a, i0)', 'locks ', guarded, ' ', depth, ', test ', omp_test_lock(lock), &
        ', nest test ', omp_test_nest_lock(nest)
    call omp_unset_lock(lock)
    call omp_unset_nest_lock(nest)
    call omp_destroy_lock(lock)
    call omp_destroy_nest_lock(nest)

    total = 0
!$omp parallel do reduction(+:total) schedule(dynamic, 5)
    do i = 1, 1000
        total = total + i
    end do
!$omp end parallel do
    print '(a, i0)', 'reduction ', total

    call omp_set_affinity_format('level %L of %N')
    length = omp_get_affinity_format(format_text)
    print '(a, i0, a, a, a)', 'format ', length, ' "', trim(format_text), '"'
    length = omp_capture_affinity(captured, '%0.3n/%N')
    print '(a, i0, a, a, a)', 'captured ', length, ' "', trim(captured), '"'
    wide_level = 0
    print '(a, i0, a, l1, a, i0)', 'level ', omp_get_level(), ', in parallel ', omp_in_parallel(), &
        ', team size(0) ', omp_get_team_size(wide_level)

    produced = 0
    consumed = 0
    fulfilled = 0
!$omp parallel
!$omp single
!$omp task detach(event) depend(out:produced) shared(produced)
    produced = 20
!$omp end task
!$omp task depend(in:produced) shared(produced, consumed, fulfilled)
    consumed = produced + fulfilled
!$omp end task
!$omp task firstprivate(event) shared(fulfilled)
!$omp atomic write
    fulfilled = 1
    call omp_fulfill_event(event)
!$omp end task
!$omp taskwait
!$omp end single
!$omp end parallel
    print '(a, i0)', 'detached task, then its dependent ', consumed
end program fortran_api

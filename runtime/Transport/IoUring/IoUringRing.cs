using System;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// One io_uring instance: the submission and completion rings mapped into this process, filled and drained by the one
/// thread that created it (<c>IORING_SETUP_SINGLE_ISSUER</c>).
/// </summary>
/// <remarks>
/// <para>
/// Memory ordering follows the kernel's rules for the shared ring indexes: an entry is written before the submission
/// tail is published with a release store, the kernel's submission head and completion tail are read with acquire
/// loads, and an entry is read before the completion head is published with a release store. Without SQPOLL the kernel
/// only reads the submission ring inside <c>io_uring_enter</c> (a full barrier), so the release stores cost nothing on
/// the fast path; with SQPOLL a full fence separates the tail store from the read of the wake-up flag.
/// </para>
/// <para>
/// Entries are taken in order and the submission array (when the kernel has one) maps slot i to entry i once, at setup.
/// </para>
/// </remarks>
internal sealed unsafe class IoUringRing : IDisposable
{
    private readonly int _fd;
    private readonly bool _sqPoll;
    private readonly bool _deferTaskRun;
    private nint _sqRing;
    private nuint _sqRingSize;
    private nint _cqRing;
    private nuint _cqRingSize;
    private nint _sqeMemory;
    private nuint _sqeSize;

    private readonly uint* _sqHead;
    private readonly uint* _sqTail;
    private readonly uint* _sqFlags;
    private readonly uint _sqMask;
    private readonly uint _sqEntries;
    private readonly Sqe* _sqes;
    private uint _sqeTail;

    private readonly uint* _cqHead;
    private readonly uint* _cqTail;
    private readonly uint _cqMask;
    private readonly Cqe* _cqes;

    private IoUringRing(int fd, in Params parameters)
    {
        _fd = fd;
        Flags = parameters.Flags;
        Features = parameters.Features;
        _sqPoll = (parameters.Flags & SetupSqPoll) != 0;
        _deferTaskRun = (parameters.Flags & SetupDeferTaskRun) != 0;
        _sqEntries = parameters.SqEntries;
        CompletionEntries = parameters.CqEntries;

        bool noSqArray = (parameters.Flags & SetupNoSqArray) != 0;
        // Without the index array (Linux 6.6+, which always maps both rings at once) the indexes live before the completions.
        _sqRingSize = noSqArray ? 0 : parameters.SqOffsets.Array + parameters.SqEntries * sizeof(uint);
        _cqRingSize = parameters.CqOffsets.Cqes + parameters.CqEntries * (uint)sizeof(Cqe);
        bool singleMap = (parameters.Features & FeatureSingleMmap) != 0;
        if (singleMap)
        {
            _sqRingSize = _cqRingSize = Math.Max(_sqRingSize, _cqRingSize);
        }

        try
        {
            _sqRing = Map(_sqRingSize, OffSqRing, "mmap(submission ring)");
            _cqRing = singleMap ? _sqRing : Map(_cqRingSize, OffCqRing, "mmap(completion ring)");
            _sqeSize = parameters.SqEntries * (uint)sizeof(Sqe);
            _sqeMemory = Map(_sqeSize, OffSqes, "mmap(submission entries)");
        }
        catch
        {
            Unmap();
            Close(fd);
            throw;
        }

        byte* sq = (byte*)_sqRing;
        _sqHead = (uint*)(sq + parameters.SqOffsets.Head);
        _sqTail = (uint*)(sq + parameters.SqOffsets.Tail);
        _sqFlags = (uint*)(sq + parameters.SqOffsets.Flags);
        _sqMask = *(uint*)(sq + parameters.SqOffsets.RingMask);
        _sqes = (Sqe*)_sqeMemory;
        if (!noSqArray)
        {
            uint* array = (uint*)(sq + parameters.SqOffsets.Array);
            for (uint i = 0; i < parameters.SqEntries; i++)
            {
                array[i] = i;
            }
        }

        _sqeTail = *_sqTail;

        byte* cq = (byte*)_cqRing;
        _cqHead = (uint*)(cq + parameters.CqOffsets.Head);
        _cqTail = (uint*)(cq + parameters.CqOffsets.Tail);
        _cqMask = *(uint*)(cq + parameters.CqOffsets.RingMask);
        _cqes = (Cqe*)(cq + parameters.CqOffsets.Cqes);
    }

    /// <summary>The ring's descriptor.</summary>
    public int Fd => _fd;

    /// <summary>The setup flags the kernel accepted.</summary>
    public uint Flags { get; }

    /// <summary>The kernel's <c>IORING_FEAT_*</c> bits.</summary>
    public uint Features { get; }

    /// <summary>Entries of the completion ring.</summary>
    public uint CompletionEntries { get; }

    /// <summary>Submissions written and not yet handed to the kernel.</summary>
    public uint Unsubmitted => _sqeTail - Volatile.Read(ref *_sqHead);

    /// <summary>Creates a ring owned by the calling thread; throws <see cref="IoUringException"/> naming the failed call.</summary>
    public static IoUringRing Create(uint entries, uint completionEntries, uint flags, uint sqPollIdleMilliseconds)
    {
        int fd = TrySetup(entries, completionEntries, flags, sqPollIdleMilliseconds, out Params parameters);
        if (fd < 0)
        {
            throw new IoUringException("io_uring_setup", -fd);
        }

        return new IoUringRing(fd, parameters);
    }

    /// <summary>Calls <c>io_uring_setup</c>; the descriptor, or a negated errno.</summary>
    public static int TrySetup(uint entries, uint completionEntries, uint flags, uint sqPollIdleMilliseconds, out Params parameters)
    {
        parameters = default;
        parameters.Flags = flags | SetupCqSize | SetupClamp;
        parameters.CqEntries = completionEntries;
        parameters.SqThreadIdle = sqPollIdleMilliseconds;
        fixed (Params* pointer = &parameters)
        {
            return Setup(entries, pointer);
        }
    }

    /// <summary>
    /// The next free submission entry, zeroed; the caller fills it before anything else is submitted. When the ring is full,
    /// what it holds is submitted first (without waiting for completions).
    /// </summary>
    public Sqe* NextSqe()
    {
        if (_sqeTail - Volatile.Read(ref *_sqHead) >= _sqEntries)
        {
            SubmitFull();
        }

        Sqe* sqe = &_sqes[_sqeTail & _sqMask];
        _sqeTail++;
        *sqe = default;
        return sqe;
    }

    /// <summary>
    /// Hands every written entry to the kernel and, with <paramref name="waitFor"/> above 0, waits until that many completions
    /// are ready. With deferred task running, the kernel's pending completions run only here, so the loop always asks for them.
    /// Returns 0, or a negated errno the caller must handle (EINTR, EAGAIN and EBUSY mean: reap and call again).
    /// </summary>
    public int SubmitAndWait(uint waitFor)
    {
        uint toSubmit = Publish();
        uint flags = EnterGetEvents;
        if (_sqPoll)
        {
            // The poller consumes what was published; the kernel needs a call only to wake it or to wait.
            Interlocked.MemoryBarrier();
            if ((Volatile.Read(ref *_sqFlags) & SqNeedWakeup) != 0)
            {
                flags |= EnterSqWakeup;
            }
            else if (waitFor == 0)
            {
                return 0;
            }
        }
        else if (toSubmit == 0 && waitFor == 0 && !_deferTaskRun && (Volatile.Read(ref *_sqFlags) & (SqTaskRun | SqCqOverflow)) == 0)
        {
            return 0;
        }

        int result = Enter(_fd, toSubmit, waitFor, flags);
        return result < 0 ? result : 0;
    }

    /// <summary>
    /// Publishes the queued submissions and waits for <paramref name="waitFor"/> completions, or for
    /// <paramref name="minWaitMicroseconds"/> once at least one is ready, whichever comes first (<c>min_wait_usec</c>, Linux 6.12;
    /// not with submission polling): 0 or a negated errno.
    /// </summary>
    public int SubmitAndWaitBatch(uint waitFor, uint minWaitMicroseconds)
    {
        uint toSubmit = Publish();
        GetEventsArgument argument = default;
        argument.MinWaitMicroseconds = minWaitMicroseconds;
        int result = Enter(_fd, toSubmit, waitFor, EnterGetEvents, &argument);
        return result < 0 ? result : 0;
    }

    /// <summary>True when a completion is ready to be read.</summary>
    public bool HasCompletions => *_cqHead != Volatile.Read(ref *_cqTail);

    /// <summary>Takes the next ready completion, if any; the slot is given back to the kernel before this returns.</summary>
    public bool TryTakeCompletion(out Cqe completion)
    {
        uint head = *_cqHead;
        if (head == Volatile.Read(ref *_cqTail))
        {
            completion = default;
            return false;
        }

        completion = _cqes[head & _cqMask];
        Volatile.Write(ref *_cqHead, head + 1);
        return true;
    }

    /// <summary>Registers or probes through <c>io_uring_register</c>; 0 or a negated errno.</summary>
    public int Register(uint opcode, void* argument, uint count) => IoUringNative.Register(_fd, opcode, argument, count);

    public void Dispose()
    {
        Unmap();
        Close(_fd);
    }

    private uint Publish()
    {
        // Release: every entry written above is visible before the kernel can see the new tail.
        Volatile.Write(ref *_sqTail, _sqeTail);
        return _sqeTail - Volatile.Read(ref *_sqHead);
    }

    private void SubmitFull()
    {
        while (true)
        {
            uint toSubmit = Publish();
            if (toSubmit < _sqEntries)
            {
                return;
            }

            uint flags = 0;
            if (_sqPoll)
            {
                Interlocked.MemoryBarrier();
                flags = (Volatile.Read(ref *_sqFlags) & SqNeedWakeup) != 0 ? EnterSqWakeup | EnterSqWait : EnterSqWait;
            }

            int result = Enter(_fd, toSubmit, 0, flags);
            if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY)
            {
                throw new IoUringException("io_uring_enter", -result);
            }

            if (result <= 0 && !_sqPoll)
            {
                // The kernel took nothing (out of memory, or completions overflowing): completions must be reaped before more is
                // submitted, and the caller is inside a completion. Yield the processor and try again.
                Thread.Yield();
            }
        }
    }

    private nint Map(nuint size, long offset, string call)
    {
        nint address = Mmap(0, size, ProtRead | ProtWrite, MapShared | MapPopulate, _fd, offset);
        if (address == -1)
        {
            throw new IoUringException(call, System.Runtime.InteropServices.Marshal.GetLastPInvokeError());
        }

        return address;
    }

    private void Unmap()
    {
        if (_sqeMemory != 0)
        {
            Munmap(_sqeMemory, _sqeSize);
            _sqeMemory = 0;
        }

        if (_cqRing != 0 && _cqRing != _sqRing)
        {
            Munmap(_cqRing, _cqRingSize);
        }

        _cqRing = 0;
        if (_sqRing != 0)
        {
            Munmap(_sqRing, _sqRingSize);
            _sqRing = 0;
        }
    }
}

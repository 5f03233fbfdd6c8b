using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;
using Falconet.Buffers;
using Microsoft.Extensions.Logging;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>Something that submits operations to a loop's ring and receives their completions there (a connection, an acceptor, the loop).</summary>
internal interface IIoUringOperations
{
    /// <summary>The index in the loop's table that the high bits of every operation's user data carry; -1 while not registered.</summary>
    int Slot { get; set; }

    /// <summary>Called on the loop thread for every completion of an operation this owner submitted.</summary>
    void OnCompletion(byte operation, int result, uint flags);

    /// <summary>Called on the loop thread when the loop stops: close at once (connections reset), then unregister once every operation completed.</summary>
    void CloseForStop();
}

/// <summary>
/// One io_uring event loop on its own thread, with the ring and the memory pool that thread owns. Every submission of
/// the loop's connections is made on this thread; other threads hand work to it through a queue and an eventfd the
/// ring keeps a read pending on.
/// </summary>
/// <remarks>
/// A turn: take every ready completion and run its owner's code (with inline scheduling the HTTP connection parses,
/// handles and writes right there), run the work other threads queued, then one <c>io_uring_enter</c> submits every
/// operation the turn produced (the receives and sends of every connection served) and waits for the next completion
/// only when nothing is left to do.
/// </remarks>
internal sealed unsafe class IoUringLoop : TransportLoop, IIoUringOperations
{
    private const byte OpWake = 1;
    private const byte OpCancel = 2;

    /// <summary>Submission queue entries per ring.</summary>
    internal const uint SubmissionEntries = 1024;

    /// <summary>Completion queue entries per ring (the kernel keeps what overflows, IORING_FEAT_NODROP).</summary>
    internal const uint CompletionEntries = 8192;

    private readonly object _wakeGate = new();
    private readonly ManualResetEventSlim _started = new(false);
    private readonly uint _setupFlags;
    private readonly uint _sqPollIdle;

    /// <summary>
    /// Sends larger than a block are tried at once with <c>sendmsg</c> before the ring (IoUringConnection.SendNowOnLoop);
    /// not with <see cref="IoUringTransportOptions.SubmissionPolling"/>, whose point is to make no system call.
    /// </summary>
    public bool SendsAtOnce { get; }
    private Exception? _startError;
    private IoUringRing? _ring;
    private int _eventFd = -1;
    private ulong* _wakeValue;
    private int _wakeRequested;
    /// <summary><see cref="IoUringTransportOptions.BatchedTurnWait"/> in microseconds; 0: off.</summary>
    private readonly uint _batchedTurnWait;

    /// <summary>The most completions a batched turn waits for.</summary>
    private const uint MaxBatch = 256;

    /// <summary>The share of a window the loop's thread must have been on the CPU for its turns to start batching (<see cref="IoUringTransportOptions.BatchedTurnBusyShare"/>), and below which they stop.</summary>
    private readonly double BusyToBatch, BusyToStop;

    /// <summary>How long a window of the busy measure is, in <see cref="Stopwatch"/> ticks (2 ms).</summary>
    private static readonly long BusyWindow = Stopwatch.Frequency / 500;

    private static readonly double s_nanosecondsPerTick = 1e9 / Stopwatch.Frequency;

    private long _windowStarted;
    private long _windowCpu;
    private bool _batching;

    private bool _wakeArmed;
    private bool _wakeCancelled;
    private volatile bool _closedForPosts;
    private bool _stopping;

    private IIoUringOperations?[] _targets = new IIoUringOperations?[64];
    private int[] _freeSlots = new int[64];
    private int _freeCount;
    private int _nextSlot;
    private int _registered;

    public IoUringLoop(int index, IoUringTransportOptions options, uint setupFlags, ILogger logger)
        : base(index, $"falconet-uring-{index}", $"iouring-{index}", options.TrackLeaks, logger)
    {
        _setupFlags = setupFlags;
        LingeringSendCheckInterval = options.LingeringSendCheckInterval;
        _sqPollIdle = (uint)options.SubmissionPollingIdle.TotalMilliseconds;
        SendsAtOnce = !options.SubmissionPolling;
        _batchedTurnWait = (uint)(options.BatchedTurnWait.Ticks / TimeSpan.TicksPerMicrosecond);
        BusyToBatch = options.BatchedTurnBusyShare;
        BusyToStop = Math.Max(0, BusyToBatch - 0.2);
        Staging = new IoUringSendStaging(Pool);

        // The ring is made on the loop thread: a single-issuer ring belongs to the thread that created it.
        StartThread();
        _started.Wait();
        if (_startError is not null)
        {
            Pool.Dispose();
            throw _startError;
        }
    }

    /// <summary>Where small sends are copied so that they complete at once (see <see cref="IoUringSendStaging"/>).</summary>
    public IoUringSendStaging Staging { get; }

    /// <summary>The buffer ring the multishot receives of the loop's connections fill.</summary>
    public IoUringReceiveBuffers ReceiveBuffers { get; private set; } = null!;

    /// <summary>See <see cref="IoUringTransportOptions.LingeringSendCheckInterval"/>.</summary>
    public TimeSpan LingeringSendCheckInterval { get; }

    /// <summary>The ring's setup flags (diagnostics and tests).</summary>
    public uint RingFlags => _ring?.Flags ?? 0;

    /// <summary>True once the loop is stopping: new connections are refused.</summary>
    public bool IsStopping => _stopping;

    /// <summary>Turns of the loop that entered the kernel (diagnostics: submissions per call).</summary>
    public long Enters;

    /// <summary>Of <see cref="Enters"/>, the waits of batched turns (<see cref="IoUringTransportOptions.BatchedTurnWait"/>; diagnostics and tests).</summary>
    public long BatchedWaits;

    protected override void Wake()
    {
        if (IsLoopThread)
        {
            // The loop looks at its queue before it waits.
            return;
        }

        if (_closedForPosts)
        {
            DrainToThreadPool();
            return;
        }

        // One eventfd write until the loop has seen it: a burst of posts costs one system call.
        if (Interlocked.Exchange(ref _wakeRequested, 1) == 0)
        {
            lock (_wakeGate)
            {
                if (!_closedForPosts)
                {
                    ulong one = 1;
                    Write(_eventFd, &one, sizeof(ulong));
                    return;
                }
            }

            DrainToThreadPool();
        }
    }

    /// <summary>Registers <paramref name="target"/> for completions; call on the loop thread.</summary>
    public void Register(IIoUringOperations target)
    {
        int slot;
        if (_freeCount > 0)
        {
            slot = _freeSlots[--_freeCount];
        }
        else
        {
            slot = _nextSlot++;
            if (slot == _targets.Length)
            {
                Array.Resize(ref _targets, _targets.Length * 2);
                Array.Resize(ref _freeSlots, _freeSlots.Length * 2);
            }
        }

        _targets[slot] = target;
        target.Slot = slot;
        _registered++;
    }

    /// <summary>Forgets <paramref name="target"/>; call on the loop thread once none of its operations is in flight.</summary>
    public void Unregister(IIoUringOperations target)
    {
        int slot = target.Slot;
        if (slot < 0)
        {
            return;
        }

        _targets[slot] = null;
        _freeSlots[_freeCount++] = slot;
        target.Slot = -1;
        _registered--;
    }

    /// <summary>A zeroed submission entry whose completion goes to <paramref name="owner"/> with <paramref name="operation"/>; call on the loop thread.</summary>
    public Sqe* Submit(IIoUringOperations owner, byte operation)
    {
        Sqe* sqe = _ring!.NextSqe();
        sqe->UserData = ((ulong)(uint)owner.Slot << 8) | operation;
        return sqe;
    }

    /// <summary>Submits a cancellation of the operation of <paramref name="owner"/> with <paramref name="operation"/>; its own completion goes to <paramref name="owner"/> as <paramref name="cancelOperation"/>.</summary>
    public void SubmitCancel(IIoUringOperations owner, byte operation, byte cancelOperation)
    {
        Sqe* sqe = Submit(owner, cancelOperation);
        sqe->Opcode = OpcodeAsyncCancel;
        sqe->Fd = -1;
        sqe->Address = ((ulong)(uint)owner.Slot << 8) | operation;
    }

    public int Slot { get; set; } = -1;

    public void OnCompletion(byte operation, int result, uint flags)
    {
        if (operation != OpWake)
        {
            return;
        }

        _wakeArmed = false;

        // Cleared before the queue is drained (this turn): a post after this point writes the eventfd again.
        Interlocked.Exchange(ref _wakeRequested, 0);
        if (result < 0 && result != -ECANCELED)
        {
            IoUringLog.LoopFailed(Logger, Index, new IoUringException("read(eventfd)", -result));
        }

        if (!_stopping)
        {
            ArmWake();
        }
    }

    public void CloseForStop()
    {
    }

    protected override void RunLoop()
    {
        try
        {
            _ring = IoUringRing.Create(SubmissionEntries, CompletionEntries, _setupFlags, _sqPollIdle);
            _eventFd = EventFd(0, EfdCloexec | EfdNonblock);
            if (_eventFd < 0)
            {
                throw new IoUringException("eventfd", Marshal.GetLastPInvokeError());
            }

            _wakeValue = (ulong*)NativeMemory.AllocZeroed(sizeof(ulong));
            ReceiveBuffers = new IoUringReceiveBuffers(_ring);

            if (_batchedTurnWait != 0 && (_ring.Features & FeatureMinTimeout) == 0)
            {
                throw new NotSupportedException(
                    $"IoUringTransportOptions.BatchedTurnWait needs io_uring_enter's min_wait_usec (IORING_FEAT_MIN_TIMEOUT, Linux 6.12); this kernel ({IoUringSupport.Current.Kernel}) has none. Leave BatchedTurnWait at zero.");
            }

            Register(this);
            ArmWake();
        }
        catch (Exception exception)
        {
            _startError = exception;
            Cleanup();
            _started.Set();
            return;
        }

        _started.Set();
        _windowStarted = Stopwatch.GetTimestamp();
        _windowCpu = _batchedTurnWait != 0 ? ThreadCpuNanoseconds() : 0;
        try
        {
            RunTurns();
        }
        catch (Exception exception)
        {
            IoUringLog.LoopFailed(Logger, Index, exception);
        }
        finally
        {
            Cleanup();
        }
    }

    private void RunTurns()
    {
        IoUringRing ring = _ring!;
        while (true)
        {
            uint reaped = ReapCompletions(ring);
            RunQueued();
            if (_stopping && _registered == 1)
            {
                if (!_wakeArmed)
                {
                    return;
                }

                if (!_wakeCancelled)
                {
                    _wakeCancelled = true;
                    SubmitCancel(this, OpWake, OpCancel);
                }
            }

            Staging.ReleaseIdle();
            ReceiveBuffers.ResumeWaiters();
            uint waitFor = ring.HasCompletions || HasQueuedWork ? 0u : 1u;
            Enters++;
            int result;
            if (_batchedTurnWait != 0)
            {
                result = SubmitAndWaitMeasured(ring, waitFor, reaped);
            }
            else
            {
                result = ring.SubmitAndWait(waitFor);
            }

            if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY && result != -ETIME)
            {
                throw new IoUringException("io_uring_enter", -result);
            }
        }
    }

    /// <summary>
    /// With batched turns: enters the kernel as <see cref="RunTurns"/> does, and while the loop's thread was busy (on the CPU,
    /// its own code and the kernel's work in its system calls) for at least <see cref="BusyToBatch"/> of the last window of
    /// <see cref="BusyWindow"/>, a turn that reaped more than one completion waits for about as many, or for the batch wait
    /// once one is ready. Below <see cref="BusyToStop"/> it stops, so light load waits as without the option. The thread's CPU
    /// time is read once per window (one <c>clock_gettime</c>), the wall clock once per turn.
    /// </summary>
    private int SubmitAndWaitMeasured(IoUringRing ring, uint waitFor, uint reaped)
    {
        int result;
        if (_batching && waitFor != 0 && reaped > 1)
        {
            BatchedWaits++;
            result = ring.SubmitAndWaitBatch(Math.Min(reaped, MaxBatch), _batchedTurnWait);
        }
        else
        {
            result = ring.SubmitAndWait(waitFor);
        }

        long now = Stopwatch.GetTimestamp();
        long wall = now - _windowStarted;
        if (wall >= BusyWindow)
        {
            long cpu = ThreadCpuNanoseconds();
            double busy = (cpu - _windowCpu) / (wall * s_nanosecondsPerTick);
            _batching = _batching ? busy >= BusyToStop : busy >= BusyToBatch;
            _windowStarted = now;
            _windowCpu = cpu;
        }

        return result;
    }

    /// <summary>Hands every ready completion to its owner; returns how many.</summary>
    private uint ReapCompletions(IoUringRing ring)
    {
        uint reaped = 0;
        while (ring.TryTakeCompletion(out Cqe completion))
        {
            reaped++;
            int slot = (int)(completion.UserData >> 8);
            IIoUringOperations? target = (uint)slot < (uint)_targets.Length ? _targets[slot] : null;
            if (target is null)
            {
                continue;
            }

            try
            {
                target.OnCompletion((byte)completion.UserData, completion.Result, completion.Flags);
            }
            catch (Exception exception)
            {
                // A completion must not take the loop down with it; the connection it belonged to times out or closes.
                IoUringLog.CallbackFailed(Logger, Index, exception);
            }
        }

        return reaped;
    }

    private void ArmWake()
    {
        Sqe* sqe = Submit(this, OpWake);
        sqe->Opcode = OpcodeRead;
        sqe->Fd = _eventFd;
        sqe->Address = (ulong)_wakeValue;
        sqe->Length = sizeof(ulong);
        _wakeArmed = true;
    }

    protected override void OnWorkItemFailed(Exception exception) => IoUringLog.WorkItemFailed(Logger, Index, exception);

    protected override void BeginStopOnLoop()
    {
        if (_stopping)
        {
            return;
        }

        _stopping = true;

        // A copy: closing may unregister owners at once.
        IIoUringOperations?[] targets = (IIoUringOperations?[])_targets.Clone();
        foreach (IIoUringOperations? target in targets)
        {
            if (target is not null && target != this)
            {
                try
                {
                    target.CloseForStop();
                }
                catch (Exception exception)
                {
                    IoUringLog.CallbackFailed(Logger, Index, exception);
                }
            }
        }
    }

    private void Cleanup()
    {
        lock (_wakeGate)
        {
            _closedForPosts = true;
        }

        // Either a poster sees the flag, or the drain after this sees its work.
        Interlocked.MemoryBarrier();
        Staging.Dispose();
        ReceiveBuffers?.Dispose();
        if (_eventFd >= 0)
        {
            Close(_eventFd);
            _eventFd = -1;
        }

        _ring?.Dispose();
        _ring = null;
        NativeMemory.Free(_wakeValue);
        _wakeValue = null;
    }
}

/// <summary>Log messages of the io_uring transport.</summary>
internal static partial class IoUringLog
{
    [LoggerMessage(EventId = 320, Level = LogLevel.Error, Message = "io_uring loop {Loop} failed.")]
    public static partial void LoopFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 321, Level = LogLevel.Error, Message = "A work item on io_uring loop {Loop} threw.")]
    public static partial void WorkItemFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 322, Level = LogLevel.Warning, Message = "Accepting a connection on io_uring loop {Loop} failed: {ErrorName} ({ErrorText}).")]
    public static partial void AcceptFailed(ILogger logger, int loop, string errorName, string errorText);

    [LoggerMessage(EventId = 323, Level = LogLevel.Error, Message = "A completion on io_uring loop {Loop} threw.")]
    public static partial void CallbackFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 324, Level = LogLevel.Debug, Message = "io_uring on Linux {Kernel}: {Loops} loops, ring flags 0x{Flags:x}.")]
    public static partial void Started(ILogger logger, string kernel, int loops, uint flags);
}

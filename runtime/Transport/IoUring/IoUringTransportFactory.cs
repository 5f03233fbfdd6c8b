using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Falconet.Transport.IoUring;

/// <summary>The io_uring transport: event loops on their own threads, each with its own ring, connections and memory pool.</summary>
/// <remarks>
/// Needs Linux 6.1 or later with io_uring allowed (<see cref="IsAvailable"/>; <see cref="UnavailableReason"/> says why not,
/// and creating the factory then throws <see cref="NotSupportedException"/> with that reason). Dispose the factory after
/// every listener is unbound and every connection disposed: it closes what is left on each loop, stops and joins the loop
/// threads, and disposes the pools.
/// </remarks>
public sealed class IoUringTransportFactory : ITransportFactory, IAsyncDisposable, IDisposable
{
    /// <summary>How long disposal waits, in total, for loop threads to end (a loop blocked by a handler is left behind).</summary>
    internal static readonly TimeSpan LoopStopTimeout = TimeSpan.FromSeconds(2);

    private readonly IoUringLoop[] _loops;
    private readonly SlabMemoryPool[] _pools;
    private volatile bool _disposed;
    private long _refusedConnections;

    /// <summary>Checks that io_uring can be used and starts the loops.</summary>
    /// <exception cref="NotSupportedException">io_uring cannot be used here; the message says why.</exception>
    public IoUringTransportFactory(IoUringTransportOptions? options = null)
    {
        Options = options ?? new IoUringTransportOptions();
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.LoopCount, 1, nameof(options));
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.Backlog, 1, nameof(options));
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.MaxConnections, 1, nameof(options));
        if (!Enum.IsDefined(Options.Scheduling))
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.Scheduling, "Unknown scheduling.");
        }

        if (Options.SubmissionPollingIdle < TimeSpan.Zero || Options.SubmissionPollingIdle.TotalMilliseconds > uint.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.SubmissionPollingIdle, "SubmissionPollingIdle is out of range.");
        }

        if (Options.BatchedTurnWait < TimeSpan.Zero || Options.BatchedTurnWait > MaxBatchedTurnWait)
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.BatchedTurnWait, "BatchedTurnWait must be between 0 and 10 ms.");
        }

        if (Options.BatchedTurnWait > TimeSpan.Zero && Options.SubmissionPolling)
        {
            throw new ArgumentException("BatchedTurnWait and SubmissionPolling cannot be combined: with submission polling the kernel's thread runs the turns.", nameof(options));
        }

        IoUringSupport support = IoUringSupport.Current;
        if (support.UnavailableReason is { } reason)
        {
            throw new NotSupportedException(reason);
        }

        // The kernel's polling thread runs the completions' task work itself: deferring it to the submitter does not apply.
        uint flags = (Options.SubmissionPolling ? IoUringSupport.RequiredFlags & ~IoUringNative.SetupDeferTaskRun | IoUringNative.SetupSqPoll : IoUringSupport.RequiredFlags)
            | support.OptionalFlags;

        Kernel = support.Kernel;
        ILogger logger = Options.LoggerFactory?.CreateLogger("Falconet.Transport.IoUring") ?? NullLogger.Instance;
        _loops = new IoUringLoop[Options.LoopCount];
        _pools = new SlabMemoryPool[_loops.Length];
        try
        {
            for (int i = 0; i < _loops.Length; i++)
            {
                _loops[i] = new IoUringLoop(i, Options, flags, logger);
                _pools[i] = _loops[i].Pool;
            }
        }
        catch
        {
            Dispose();
            throw;
        }

        IoUringLog.Started(logger, Kernel, _loops.Length, _loops[0].RingFlags);
    }

    /// <summary>The largest <see cref="IoUringTransportOptions.BatchedTurnWait"/>.</summary>
    internal static readonly TimeSpan MaxBatchedTurnWait = TimeSpan.FromMilliseconds(10);

    /// <summary>The settings the factory was created with.</summary>
    public IoUringTransportOptions Options { get; }

    /// <summary>The kernel release the transport runs on, e.g. <c>6.18.4</c>.</summary>
    public string Kernel { get; }

    /// <summary>Every loop's pool, for diagnostics (for example waiting until every block is back).</summary>
    public IReadOnlyList<SlabMemoryPool> Pools => _pools;

    /// <summary>Connections accepted by each loop since start, for diagnostics (the spread over loops).</summary>
    public IReadOnlyList<long> AcceptedPerLoop => TransportLoops.AcceptedPerLoop(_loops);

    /// <summary>True when io_uring can be used by this process (Linux 6.1 or later, not disabled, not blocked by seccomp).</summary>
    public static bool IsAvailable => IoUringSupport.Current.IsAvailable;

    /// <summary>Null when <see cref="IsAvailable"/>; otherwise one sentence that says why io_uring cannot be used here.</summary>
    public static string? UnavailableReason => IoUringSupport.Current.UnavailableReason;

    internal IoUringLoop[] Loops => _loops;

    /// <summary>Connections of every loop not closed yet, including those accepted but not handed out.</summary>
    internal int OpenConnections => TransportLoops.OpenConnections(_loops);

    /// <summary>Connections reset at accept: past <see cref="IoUringTransportOptions.MaxConnections"/>, or shed while out of descriptors.</summary>
    public long RefusedConnections => Interlocked.Read(ref _refusedConnections);

    /// <summary>True with <see cref="IoScheduling.ThreadPool"/>: handlers run on the thread pool, woken by the loop.</summary>
    public bool HandsOffCompletions => Options.Scheduling == IoScheduling.ThreadPool;

    /// <summary>Counts a connection reset at accept (<see cref="RefusedConnections"/>).</summary>
    internal void CountRefused() => Interlocked.Increment(ref _refusedConnections);

    /// <summary>Loop threads that have not ended yet (0 after a disposal that joined them all).</summary>
    internal int LoopsRunning => TransportLoops.Running(_loops);

    /// <summary>
    /// Listens on <paramref name="endpoint"/> on every loop: an <see cref="IPEndPoint"/> (one socket per loop with SO_REUSEPORT;
    /// port 0 picks a free port; IPv6Any also accepts IPv4), a <see cref="UnixDomainSocketEndPoint"/> (the path must not
    /// exist: the server removes a stale socket file first), or a <see cref="ListenSocketEndPoint"/>, a socket already
    /// listening, adopted as it is; the last two are one socket that every loop accepts from.
    /// </summary>
    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ct.ThrowIfCancellationRequested();
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (endpoint is not (IPEndPoint or UnixDomainSocketEndPoint or ListenSocketEndPoint))
        {
            throw new NotSupportedException($"The io_uring transport listens on IP and Unix domain socket endpoints or adopts a listening socket, not {endpoint.GetType().Name}.");
        }

        var listener = new IoUringConnectionListener(this, endpoint);
        await listener.BindAsync(endpoint).ConfigureAwait(false);
        return listener;
    }

    /// <summary>Stops the loops (resetting any connection still open) and disposes the pools.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        TransportLoops.Stop(_loops, LoopStopTimeout);
    }

    /// <summary>Stops the loops (resetting any connection still open) and disposes the pools.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return default;
    }
}

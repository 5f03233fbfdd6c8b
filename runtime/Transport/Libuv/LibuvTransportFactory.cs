using System;
using System.Collections.Generic;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Falconet.Transport.Libuv;

/// <summary>The libuv transport: event loops on their own threads, each owning its connections and its memory pool.</summary>
/// <remarks>
/// Needs the system's libuv 1.x (<c>libuv.so.1</c>, Debian package <c>libuv1</c>); creating the factory without it
/// throws a <see cref="DllNotFoundException"/> that names the package. Dispose the factory after every listener is
/// unbound and every connection disposed: it closes what is left on each loop, stops and joins the loop threads,
/// and disposes the pools.
/// </remarks>
public sealed class LibuvTransportFactory : ITransportFactory, IAsyncDisposable, IDisposable
{
    /// <summary>How long disposal waits, in total, for loop threads to end (a loop blocked by a handler is left behind).</summary>
    internal static readonly TimeSpan LoopStopTimeout = TimeSpan.FromSeconds(2);

    private readonly LibuvLoop[] _loops;
    private long _refusedConnections;
    private readonly SlabMemoryPool[] _pools;
    private volatile bool _disposed;

    /// <summary>Loads libuv and starts the loops.</summary>
    /// <exception cref="DllNotFoundException">libuv is not installed.</exception>
    public LibuvTransportFactory(LibuvTransportOptions? options = null)
    {
        Options = options ?? new LibuvTransportOptions();
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.LoopCount, 1, nameof(options));
        ArgumentOutOfRangeException.ThrowIfLessThan(Options.Backlog, 1, nameof(options));
        if (!Enum.IsDefined(Options.Scheduling))
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.Scheduling, "Unknown scheduling.");
        }

        if (!Enum.IsDefined(Options.Distribution))
        {
            throw new ArgumentOutOfRangeException(nameof(options), Options.Distribution, "Unknown distribution.");
        }

        Version = EnsureLoaded(LibuvNative.LibraryName);
        ILogger logger = Options.LoggerFactory?.CreateLogger("Falconet.Transport.Libuv") ?? NullLogger.Instance;
        _loops = new LibuvLoop[Options.LoopCount];
        _pools = new SlabMemoryPool[_loops.Length];
        try
        {
            for (int i = 0; i < _loops.Length; i++)
            {
                _loops[i] = new LibuvLoop(i, Options.TrackLeaks, logger);
                _pools[i] = _loops[i].Pool;
            }
        }
        catch
        {
            Dispose();
            throw;
        }

        LibuvLog.Started(logger, Version, _loops.Length, Options.Distribution);
    }

    /// <summary>The settings the factory was created with.</summary>
    public LibuvTransportOptions Options { get; }

    /// <summary>The version of the libuv library in use, e.g. <c>1.44.2</c>.</summary>
    public string Version { get; }

    /// <summary>Every loop's pool, for diagnostics (for example waiting until every block is back).</summary>
    public IReadOnlyList<SlabMemoryPool> Pools => _pools;

    /// <summary>Connections accepted by each loop since start, for diagnostics (the spread over loops).</summary>
    public IReadOnlyList<long> AcceptedPerLoop => TransportLoops.AcceptedPerLoop(_loops);

    internal LibuvLoop[] Loops => _loops;

    /// <summary>Connections of every loop not closed yet, including those accepted but not handed out.</summary>
    internal int OpenConnections => TransportLoops.OpenConnections(_loops);

    /// <summary>Connections reset at accept: past <see cref="LibuvTransportOptions.MaxConnections"/>, or shed while out of descriptors.</summary>
    public long RefusedConnections => Interlocked.Read(ref _refusedConnections);

    /// <summary>True with <see cref="IoScheduling.ThreadPool"/>: handlers run on the thread pool, woken by the loop.</summary>
    public bool HandsOffCompletions => Options.Scheduling == IoScheduling.ThreadPool;

    /// <summary>Counts a connection reset at accept (<see cref="RefusedConnections"/>).</summary>
    internal void CountRefused() => Interlocked.Increment(ref _refusedConnections);

    /// <summary>Loop threads that have not ended yet (0 after a disposal that joined them all).</summary>
    internal int LoopsRunning => TransportLoops.Running(_loops);

    /// <summary>True when libuv (1.32 or later) can be loaded on this machine.</summary>
    public static bool IsAvailable => CanLoad(LibuvNative.LibraryName) && IsSupportedVersion(LibuvNative.Version());

    /// <summary>The Debian and Ubuntu package that provides libuv (<c>libuv1</c>).</summary>
    public static string PackageName => LibuvNative.PackageName;

    private static bool IsSupportedVersion(uint version) => version >> 16 == 1 && ((version >> 8) & 0xff) >= 32;

    private static bool CanLoad(string libraryName) => NativeLibrary.TryLoad(libraryName, typeof(LibuvTransportFactory).Assembly, null, out _);

    /// <summary>
    /// Listens on <paramref name="endpoint"/> on every loop: an <see cref="IPEndPoint"/> (port 0 picks a free port; IPv6Any
    /// also accepts IPv4), a <see cref="System.Net.Sockets.UnixDomainSocketEndPoint"/> (uv_pipe handles), or a
    /// <see cref="ListenSocketEndPoint"/>, a socket already listening, adopted as it is.
    /// </summary>
    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ct.ThrowIfCancellationRequested();
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (endpoint is not (IPEndPoint or System.Net.Sockets.UnixDomainSocketEndPoint or ListenSocketEndPoint))
        {
            throw new NotSupportedException($"The libuv transport listens on IP and Unix domain socket endpoints or adopts a listening socket, not {endpoint.GetType().Name}.");
        }

        var listener = new LibuvConnectionListener(this, endpoint);
        await listener.BindAsync(endpoint).ConfigureAwait(false);
        return listener;
    }

    /// <summary>Stops the loops (closing any handle still open) and disposes the pools.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        TransportLoops.Stop(_loops, LoopStopTimeout);
    }

    /// <summary>Stops the loops (closing any handle still open) and disposes the pools.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return default;
    }

    /// <summary>Throws an error naming the package to install when <paramref name="libraryName"/> cannot be loaded; returns libuv's version.</summary>
    internal static string EnsureLoaded(string libraryName)
    {
        if (!CanLoad(libraryName))
        {
            throw new DllNotFoundException(
                $"The libuv transport needs {libraryName}, which was not found. Install the '{LibuvNative.PackageName}' package " +
                $"(Debian and Ubuntu: sudo apt-get install {LibuvNative.PackageName}) or choose the sockets transport.");
        }

        uint version = LibuvNative.Version();
        if (!IsSupportedVersion(version))
        {
            throw new NotSupportedException($"The libuv transport needs libuv 1.32 or later; found {version >> 16}.{(version >> 8) & 0xff}.{version & 0xff}.");
        }

        return $"{version >> 16}.{(version >> 8) & 0xff}.{version & 0xff}";
    }
}

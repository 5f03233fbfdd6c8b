using System.Threading;
using System.Threading.Tasks;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// What the server sees of a connection, whatever protocol it speaks (<see cref="Http1.HttpConnection"/> for HTTP/1.1, which hands
/// over to HTTP/2 when a client opens with the HTTP/2 preface; <see cref="Http2.Http2Connection"/> for a connection that
/// negotiated h2): run it, visit it on every heartbeat, close it when idle, abort it.
/// </summary>
internal abstract class ServerConnection : IThreadPoolWorkItem
{
    private static long s_nextId;

    protected ServerConnection()
    {
        Id = Interlocked.Increment(ref s_nextId);
    }

    /// <summary>A number that identifies the connection within the process.</summary>
    public long Id { get; }

    public abstract TransportConnection Transport { get; }

    /// <summary>Requests started on this connection; other threads may read it (the server sums it over its connections).</summary>
    public abstract long RequestCount { get; }

    /// <summary>The most output bytes this connection buffered at once (write-behind diagnostics).</summary>
    public abstract long PeakBufferedOutput { get; }

    /// <summary>Marks a connection the accept loop counted as queued.</summary>
    public abstract void SetQueued(bool queued);

    /// <summary>Runs the connection until it ends and has returned its blocks; then reports to the server.</summary>
    public abstract Task RunAsync();

    /// <summary>Called by the server's heartbeat with the current timestamp: deadlines and data rates.</summary>
    public abstract void OnHeartbeat(long now);

    /// <summary>The server stops: an idle connection closes now, a busy one after what it is doing.</summary>
    public abstract void CloseIfIdle();

    /// <summary>Closes at once (the shutdown timeout passed).</summary>
    public abstract void Abort();

    /// <summary>Starts <see cref="RunAsync"/> where the transport scheduled it.</summary>
    void IThreadPoolWorkItem.Execute() => _ = RunAsync();
}

using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace Falconet.Transport;

/// <summary>
/// Connections a transport accepted on its own threads (loops), waiting for <see cref="IConnectionListener.AcceptAsync"/>;
/// once the queue is closed, a connection still queued or added late is reset, since nobody else will close it.
/// </summary>
internal sealed class AcceptQueue
{
    private readonly Channel<TransportConnection> _accepted = Channel.CreateUnbounded<TransportConnection>(new UnboundedChannelOptions
    {
        SingleReader = false,
        SingleWriter = false,
        AllowSynchronousContinuations = false,
    });

    /// <summary>The next accepted connection; null once the queue is closed.</summary>
    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct)
    {
        try
        {
            return await _accepted.Reader.ReadAsync(ct).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    /// <summary>Queues <paramref name="connection"/>; resets it when the queue is closed.</summary>
    public void Add(TransportConnection connection)
    {
        if (!_accepted.Writer.TryWrite(connection))
        {
            connection.Abort();
            _ = connection.DisposeAsync();
        }
    }

    /// <summary>
    /// Takes no more connections (a later one is reset); the ones queued are still handed out, then accepts return null.
    /// Used at unbind: their clients connected and may have sent a request.
    /// </summary>
    public void Complete() => _accepted.Writer.TryComplete();

    /// <summary>Closes the queue: pending and later accepts return null; connections still queued are reset and disposed.</summary>
    public async ValueTask CloseAsync()
    {
        _accepted.Writer.TryComplete();
        while (_accepted.Reader.TryRead(out TransportConnection? connection))
        {
            connection.Abort();
            await connection.DisposeAsync().ConfigureAwait(false);
        }
    }
}

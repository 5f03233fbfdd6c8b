using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// The bytes a connection has received and not yet consumed: the transport receives straight into the free
/// space of the tail block, so requests and bodies that span reads span blocks without a copy.
/// </summary>
internal sealed class Http1Input : IDisposable
{
    private readonly TransportConnection _transport;
    private readonly BlockChain _chain;

    public Http1Input(TransportConnection transport)
    {
        _transport = transport;
        _chain = new BlockChain(transport.Pool);
    }

    /// <summary>Received bytes not yet consumed.</summary>
    public long Buffered => _chain.Length;

    /// <summary>True once the peer closed its sending side.</summary>
    public bool PeerClosed { get; private set; }

    public ReadOnlySequence<byte> GetSequence() => _chain.GetSequence();

    public void Consume(SequencePosition consumedTo) => _chain.Consume(consumedTo);

    /// <summary>Receives once into the tail block; returns the byte count, 0 when the peer closed.</summary>
    public ValueTask<int> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        ValueTask<int> receive = BeginReceive(cancellationToken);
        if (receive.IsCompletedSuccessfully)
        {
            return new ValueTask<int>(EndReceive(receive.Result));
        }

        return AwaitReceiveAsync(receive);
    }

    /// <summary>
    /// Starts a receive into the tail block's free space; the caller awaits it and passes the count to
    /// <see cref="EndReceive"/>. The connection loop uses this pair so that it awaits the transport directly.
    /// </summary>
    public ValueTask<int> BeginReceive(CancellationToken cancellationToken)
    {
        if (PeerClosed)
        {
            return new ValueTask<int>(0);
        }

        Memory<byte> free = _chain.GetWritableMemory(SlabMemoryPool.BlockSize / 2);
        return _transport.ReceiveAsync(free, cancellationToken);
    }

    /// <summary>Commits the bytes a receive wrote into the tail block; 0 marks the peer as closed.</summary>
    public int EndReceive(int received)
    {
        if (received == 0)
        {
            PeerClosed = true;
        }
        else
        {
            _chain.Advance(received);
        }

        return received;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> AwaitReceiveAsync(ValueTask<int> receive) => EndReceive(await receive.ConfigureAwait(false));

    public void Dispose() => _chain.Dispose();
}

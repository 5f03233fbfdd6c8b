using System;
using System.Buffers;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport;

/// <summary>One accepted connection: receive into memory, send a sequence of blocks in one gathered call, abort or close.</summary>
/// <remarks>
/// At most one receive and one send may be pending at a time (they may overlap each other). Failures surface as
/// <see cref="ConnectionResetException"/> (the peer reset), <see cref="ConnectionAbortedException"/> (the
/// connection was aborted or disposed locally) or another <see cref="System.IO.IOException"/>; cancelling a
/// pending operation aborts the connection and throws <see cref="OperationCanceledException"/>.
/// </remarks>
public abstract class TransportConnection : IAsyncDisposable
{
    /// <summary>The local endpoint, when known.</summary>
    public abstract EndPoint? LocalEndPoint { get; }

    /// <summary>The remote endpoint, when known.</summary>
    public abstract EndPoint? RemoteEndPoint { get; }

    /// <summary>The pool of this connection's I/O thread; rent receive and send blocks from it.</summary>
    public abstract SlabMemoryPool Pool { get; }

    /// <summary>Receives into <paramref name="buffer"/> (normally a pool block's free space); 0 when the peer closed its side or the connection was aborted locally. No Task is allocated per call.</summary>
    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default);

    /// <summary>Sends every segment of <paramref name="buffers"/> in one gathered call; completes when the system took all bytes. No Task is allocated per call.</summary>
    public abstract ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default);

    /// <summary>Closes at once with a reset (RST); a pending receive returns 0 and a pending send fails.</summary>
    public abstract void Abort();

    /// <summary>Closes gracefully: shuts down the sending side, then closes.</summary>
    public abstract ValueTask DisposeAsync();
}

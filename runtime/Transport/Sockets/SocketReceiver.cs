using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Sockets;

/// <summary>The one reusable receive operation of a connection.</summary>
internal sealed class SocketReceiver : SocketOperation, IValueTaskSource<int>
{
    public SocketReceiver(SocketConnection connection, IoLane? lane)
        : base(connection, lane)
    {
    }

    protected override string Kind => "receive";

    public ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct)
    {
        short token = Begin(ct);
        bool pending;
        try
        {
            SetBuffer(buffer);
            pending = Socket.ReceiveAsync(this);
        }
        catch (ObjectDisposedException)
        {
            // Aborted or disposed between the caller's check and the socket call.
            return CompletedSynchronously(SocketError.OperationAborted, 0);
        }

        return pending
            ? new ValueTask<int>(this, token)
            : CompletedSynchronously(SocketError, BytesTransferred);
    }

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        SocketError error = SocketError;
        if (error == SocketError.Success)
        {
            CompleteAsynchronously(BytesTransferred, null);
        }
        else
        {
            CompleteAsynchronously(0, MapError(error));
        }
    }

    private ValueTask<int> CompletedSynchronously(SocketError error, int bytes)
    {
        Exception? exception = error == SocketError.Success ? null : MapError(error);
        EndSynchronously();
        return exception is null ? new ValueTask<int>(bytes) : ValueTask.FromException<int>(exception);
    }

    /// <summary>Null when the failure reads as end of stream: the connection was closed or aborted on this side.</summary>
    private Exception? MapError(SocketError error)
    {
        if (!IsCanceled && (Connection.IsClosedLocally || error is SocketError.OperationAborted or SocketError.Interrupted))
        {
            return null;
        }

        return CreateException(error);
    }

    public int GetResult(short token) => GetResultCore(token);

    public ValueTaskSourceStatus GetStatus(short token) => GetStatusCore(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        OnCompletedCore(continuation, state, token, flags);
}

using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Transport.Sockets;

/// <summary>A listening TCP socket; accepted sockets become <see cref="SocketConnection"/>s spread round robin over the factory's lanes.</summary>
internal sealed class SocketConnectionListener : IConnectionListener
{
    private readonly SocketTransportFactory _factory;
    private readonly Socket _socket;
    private volatile bool _unbound;

    public SocketConnectionListener(SocketTransportFactory factory, Socket socket)
    {
        _factory = factory;
        _socket = socket;
        EndPoint = socket.LocalEndPoint!;
    }

    public EndPoint EndPoint { get; }

    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default)
    {
        while (!_unbound)
        {
            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync(ct).ConfigureAwait(false);
            }
            catch (ObjectDisposedException)
            {
                return null;
            }
            catch (SocketException e) when (_unbound || e.SocketErrorCode is SocketError.OperationAborted or SocketError.Interrupted)
            {
                return null;
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted)
            {
                // The client gave up before it was accepted; wait for the next one.
                continue;
            }

            return _factory.CreateConnection(accepted);
        }

        return null;
    }

    public ValueTask UnbindAsync()
    {
        _unbound = true;
        _socket.Dispose();
        return default;
    }

    public ValueTask DisposeAsync() => UnbindAsync();
}

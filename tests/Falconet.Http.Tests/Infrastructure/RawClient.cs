using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>A raw HTTP/1.1 client over a socket, or over TLS on it: sends exact bytes, reads responses one at a time, sees the close.</summary>
internal sealed class RawClient : IDisposable
{
    private readonly Socket _socket;
    private readonly SslStream? _tls;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;

    private RawClient(Socket socket, SslStream? tls = null)
    {
        _socket = socket;
        _tls = tls;
    }

    public Socket Socket => _socket;

    /// <summary>The TLS session when the client speaks HTTPS.</summary>
    public SslStream? Tls => _tls;

    /// <summary>
    /// Connects and completes a TLS handshake (synchronously, as <see cref="Connect"/> connects) that trusts exactly the
    /// test certificate; with <paramref name="sendPieces"/>, records leave in pieces of those sizes (<see cref="PieceStream"/>).
    /// </summary>
    public static RawClient ConnectTls(IPEndPoint endPoint, int? receiveBufferSize = null, SslClientAuthenticationOptions? options = null, byte[]? preamble = null, bool trickle = false, int[]? sendPieces = null)
    {
        RawClient plain = Connect(endPoint, receiveBufferSize, preamble, trickle);
        plain._socket.ReceiveTimeout = (int)TestTimeouts.Operation.TotalMilliseconds;
        Stream network = new NetworkStream(plain._socket, ownsSocket: false);
        var tls = new SslStream(sendPieces is null ? network : new PieceStream(network, sendPieces), leaveInnerStreamOpen: true);
        try
        {
            tls.AuthenticateAsClient(options ?? TestCertificates.ClientOptions());
        }
        catch
        {
            tls.Dispose();
            plain.Dispose();
            throw;
        }

        plain._socket.ReceiveTimeout = 0;
        return new RawClient(plain._socket, tls);
    }

    /// <summary>Connects; <paramref name="preamble"/> is sent first, as is (a PROXY protocol header before TLS, say), or a byte per send with <paramref name="trickle"/>.</summary>
    public static RawClient Connect(IPEndPoint endPoint, int? receiveBufferSize = null, byte[]? preamble = null, bool trickle = false)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBufferSize is int size)
        {
            socket.ReceiveBufferSize = size;
        }

        socket.Connect(endPoint);
        for (int sent = 0; preamble is not null && sent < preamble.Length;)
        {
            sent += socket.Send(preamble.AsSpan(sent, trickle ? 1 : preamble.Length - sent));
            if (trickle)
            {
                Thread.Sleep(2);
            }
        }

        return new RawClient(socket);
    }

    public Task SendAsync(string text) => SendAsync(Encoding.Latin1.GetBytes(text));

    public async Task SendAsync(ReadOnlyMemory<byte> bytes)
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        while (!bytes.IsEmpty)
        {
            if (_tls is not null)
            {
                await _tls.WriteAsync(bytes, timeout.Token);
                return;
            }

            int sent = await _socket.SendAsync(bytes, SocketFlags.None, timeout.Token);
            bytes = bytes[sent..];
        }
    }

    /// <summary>Reads one whole response; HEAD responses and 1xx have no body.</summary>
    public async Task<RawResponse> ReadResponseAsync(bool headRequest = false)
    {
        RawResponse head = await ReadHeadAsync();
        int status = head.StatusCode;
        byte[] body;
        if (headRequest || status < 200 || status == 204 || status == 304)
        {
            body = Array.Empty<byte>();
        }
        else if (head.Chunked)
        {
            body = await ReadChunkedAsync();
        }
        else if (head.Headers.TryGetValue("Content-Length", out List<string>? length))
        {
            body = await ReadExactAsync(long.Parse(length[0], CultureInfo.InvariantCulture));
        }
        else
        {
            body = await ReadToEndAsync();
        }

        return new RawResponse(head.StatusLine, status, head.Headers, body, head.Chunked);
    }

    /// <summary>Reads the status line and headers of a response, leaving its body to read (an empty <see cref="RawResponse.Body"/>).</summary>
    public async Task<RawResponse> ReadHeadAsync()
    {
        string statusLine = await ReadLineAsync() ?? throw new EndOfStreamException("The server closed the connection before a response.");
        string[] parts = statusLine.Split(' ', 3);
        int status = int.Parse(parts[1], CultureInfo.InvariantCulture);
        var headers = new Dictionary<string, List<string>>(StringComparer.OrdinalIgnoreCase);
        while (true)
        {
            string line = await ReadLineAsync() ?? throw new EndOfStreamException("The connection closed inside the headers.");
            if (line.Length == 0)
            {
                break;
            }

            int colon = line.IndexOf(':', StringComparison.Ordinal);
            string name = line[..colon];
            if (!headers.TryGetValue(name, out List<string>? values))
            {
                headers[name] = values = new List<string>();
            }

            values.Add(line[(colon + 1)..].Trim());
        }

        bool chunked = headers.TryGetValue("Transfer-Encoding", out List<string>? te) && te.Contains("chunked");
        return new RawResponse(statusLine, status, headers, Array.Empty<byte>(), chunked);
    }

    /// <summary>Reads one chunk of a chunked body; empty for the last chunk, whose trailer section it reads too.</summary>
    public async Task<byte[]> ReadChunkAsync()
    {
        string sizeLine = await ReadLineAsync() ?? throw new EndOfStreamException("The connection closed inside a chunked body.");
        int size = int.Parse(sizeLine.Split(';')[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        if (size == 0)
        {
            while (!string.IsNullOrEmpty(await ReadLineAsync()))
            {
            }

            return Array.Empty<byte>();
        }

        byte[] data = await ReadExactAsync(size);
        if (await ReadLineAsync() != string.Empty)
        {
            throw new InvalidDataException("A chunk does not end with CRLF.");
        }

        return data;
    }

    /// <summary>True when the server closed the connection (a read returns 0) within the timeout.</summary>
    public async Task<bool> IsClosedByServerAsync()
    {
        if (_end > _start)
        {
            return false;
        }

        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        try
        {
            return await ReceiveAsync(_buffer.AsMemory(), timeout.Token) == 0;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    /// <summary>
    /// Reads once from the socket past the responses read so far: 0 at a clean end of stream (FIN), the byte count if
    /// more came; a reset throws <see cref="SocketException"/>.
    /// </summary>
    public Task<int> ReceiveEndAsync() => ReceiveAsync(new byte[64 * 1024].AsMemory(), CancellationToken.None).AsTask();

    /// <summary>
    /// Everything the server still sends (after what was read so far) until it closes, and whether it closed with a reset
    /// instead of a FIN.
    /// </summary>
    public async Task<(byte[] Bytes, bool Reset)> ReadUntilClosedAsync()
    {
        using var received = new MemoryStream();
        received.Write(_buffer, _start, _end - _start);
        _start = _end;
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        var buffer = new byte[16 * 1024];
        try
        {
            int n;
            while ((n = await ReceiveAsync(buffer.AsMemory(), timeout.Token)) > 0)
            {
                received.Write(buffer, 0, n);
            }
        }
        catch (SocketException exception) when (exception.SocketErrorCode == SocketError.ConnectionReset)
        {
            return (received.ToArray(), true);
        }

        return (received.ToArray(), false);
    }

    /// <summary>One read from the socket, or from the TLS session (whose failures surface as the socket's would).</summary>
    private async ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        if (_tls is null)
        {
            return await _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
        }

        try
        {
            return await _tls.ReadAsync(buffer, cancellationToken);
        }
        catch (IOException exception) when (exception.InnerException is SocketException socketException)
        {
            throw socketException;
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes.</summary>
    public async Task<byte[]> ReadExactAsync(long count)
    {
        var result = new byte[count];
        int filled = 0;
        while (filled < count)
        {
            if (_end == _start && !await FillAsync())
            {
                throw new EndOfStreamException($"Expected {count} bytes, got {filled}.");
            }

            int n = (int)Math.Min(_end - _start, count - filled);
            Array.Copy(_buffer, _start, result, filled, n);
            _start += n;
            filled += n;
        }

        return result;
    }

    public async Task<string?> ReadLineAsync()
    {
        var line = new StringBuilder();
        while (true)
        {
            if (_end == _start && !await FillAsync())
            {
                return line.Length == 0 ? null : throw new EndOfStreamException("The connection closed inside a line.");
            }

            byte b = _buffer[_start++];
            if (b == '\n')
            {
                if (line.Length > 0 && line[^1] == '\r')
                {
                    line.Length--;
                }

                return line.ToString();
            }

            line.Append((char)b);
        }
    }

    private async Task<byte[]> ReadChunkedAsync()
    {
        using var body = new MemoryStream();
        byte[] chunk;
        while ((chunk = await ReadChunkAsync()).Length != 0)
        {
            body.Write(chunk);
        }

        return body.ToArray();
    }

    private async Task<byte[]> ReadToEndAsync()
    {
        using var body = new MemoryStream();
        body.Write(_buffer, _start, _end - _start);
        _start = _end;
        while (await FillAsync())
        {
            body.Write(_buffer, _start, _end - _start);
            _start = _end;
        }

        return body.ToArray();
    }

    private async Task<bool> FillAsync()
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        _start = 0;
        _end = 0;
        int n = await ReceiveAsync(_buffer.AsMemory(), timeout.Token);
        _end = n;
        return n > 0;
    }

    public void Dispose()
    {
        _tls?.Dispose();
        _socket.Dispose();
    }
}

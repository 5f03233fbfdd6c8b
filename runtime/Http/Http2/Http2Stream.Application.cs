using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Server;

namespace Falconet.Http.Http2;

// What a handler may ask of its stream beyond the request and response: its own minimum data rates, a protocol switch
// (never on HTTP/2), and a failure after the response started that a framework logged itself.
internal sealed partial class Http2Stream
{
    private RequestDataRates _requestRates;
    private bool _failedAfterStart;

    public MinDataRate? MinRequestBodyDataRate
    {
        get => _requestRates.RequestBody(_settings);
        set => _requestRates.Set(value, MinResponseDataRate, _settings, _rates);
    }

    public MinDataRate? MinResponseDataRate
    {
        get => _requestRates.Response(_settings);
        set => _requestRates.Set(MinRequestBodyDataRate, value, _settings, _rates);
    }

    /// <summary>An HTTP/2 stream cannot switch protocols (RFC 9113 section 8.6: the Upgrade mechanism is HTTP/1.1's).</summary>
    public bool CanUpgrade => false;

    public ValueTask<Stream> UpgradeAsync(CancellationToken cancellationToken)
        => throw new InvalidOperationException("An HTTP/2 stream cannot switch protocols (CanUpgrade is false).");

    /// <summary>Once the handler returns, the stream is reset (INTERNAL_ERROR) as when a handler fails after its response started; not logged again.</summary>
    public void FailStartedResponse() => _failedAfterStart = true;

    /// <summary>The connection ended and no handler runs: the application's per-connection state of this stream object is disposed.</summary>
    public ValueTask DisposeConnectionStateAsync() => Context.DisposeConnectionStateAsync();

    /// <summary>A new stream starts with the server's rates and no failure.</summary>
    private void ResetApplicationState()
    {
        _requestRates.Restore(_rates);
        _failedAfterStart = false;
    }
}

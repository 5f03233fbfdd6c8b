using Falconet.Server;

namespace Falconet.Http;

/// <summary>
/// The minimum data rates of the current request (HTTP/1.1 connection or HTTP/2 stream): the server's, unless the handler set
/// its own (a streaming request that may pause, say). Restored for every request. A field of its owner, with no allocation.
/// </summary>
internal struct RequestDataRates
{
    private MinDataRate? _requestBody;
    private MinDataRate? _response;
    private bool _set;

    public readonly MinDataRate? RequestBody(HttpConnectionSettings settings) => _set ? _requestBody : settings.MinRequestBodyRate;

    public readonly MinDataRate? Response(HttpConnectionSettings settings) => _set ? _response : settings.MinResponseRate;

    /// <summary>Sets both rates of the request and applies them to <paramref name="monitor"/>.</summary>
    public void Set(MinDataRate? requestBody, MinDataRate? response, HttpConnectionSettings settings, DataRateMonitor monitor)
    {
        _requestBody = requestBody;
        _response = response;
        _set = true;
        monitor.SetLimits(requestBody?.ToLimit(settings.TimeProvider) ?? default, response?.ToLimit(settings.TimeProvider) ?? default);
    }

    /// <summary>A new request starts with the server's rates.</summary>
    public void Restore(DataRateMonitor monitor)
    {
        if (_set)
        {
            _set = false;
            monitor.RestoreServerLimits();
        }
    }
}

using Falconet.Server;

namespace Falconet.Http.Http1;

// The minimum data rates of the current request: the server's, unless the handler set its own (a streaming request that
// may pause, say). Restored for every request.
internal sealed partial class HttpConnection
{
    private MinDataRate? _requestBodyRate;
    private MinDataRate? _responseRate;
    private bool _dataRatesSet;

    public MinDataRate? MinRequestBodyDataRate
    {
        get => _dataRatesSet ? _requestBodyRate : _settings.MinRequestBodyRate;
        set => SetDataRates(value, MinResponseDataRate);
    }

    public MinDataRate? MinResponseDataRate
    {
        get => _dataRatesSet ? _responseRate : _settings.MinResponseRate;
        set => SetDataRates(MinRequestBodyDataRate, value);
    }

    private void SetDataRates(MinDataRate? requestBody, MinDataRate? response)
    {
        _requestBodyRate = requestBody;
        _responseRate = response;
        _dataRatesSet = true;
        _rates.SetLimits(requestBody?.ToLimit(_settings.TimeProvider) ?? default, response?.ToLimit(_settings.TimeProvider) ?? default);
    }

    /// <summary>A new request starts with the server's rates.</summary>
    private void RestoreDataRates()
    {
        if (_dataRatesSet)
        {
            _dataRatesSet = false;
            _rates.RestoreServerLimits();
        }
    }
}

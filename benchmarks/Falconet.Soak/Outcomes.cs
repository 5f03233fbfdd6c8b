using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;
using System.Threading;

namespace Falconet.Soak;

/// <summary>What the client saw, by scenario and outcome: counted as it goes, printed at the end.</summary>
internal sealed class Outcomes
{
    private readonly ConcurrentDictionary<(string Scenario, string Outcome), long> _counts = new();
    private readonly ConcurrentQueue<string> _surprises = new();
    private long _requests;

    /// <summary>Responses the client read and checked as valid.</summary>
    public long Requests => Interlocked.Read(ref _requests);

    public void Served(long requests) => Interlocked.Add(ref _requests, requests);

    public void Count(string scenario, string outcome) => _counts.AddOrUpdate((scenario, outcome), 1, static (_, n) => n + 1);

    /// <summary>An outcome the server should never produce (wrong status, wrong body, a hang): counted, and the first few kept.</summary>
    public void Surprise(string scenario, string detail)
    {
        Count(scenario, "unexpected");
        if (_surprises.Count < 20)
        {
            _surprises.Enqueue($"{scenario}: {detail}");
        }
    }

    public long Unexpected => _counts.Where(entry => entry.Key.Outcome == "unexpected").Sum(entry => entry.Value);

    public string Report()
    {
        var text = new StringBuilder();
        text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"client_valid_responses={Requests}"));
        foreach (IGrouping<string, KeyValuePair<(string Scenario, string Outcome), long>> scenario in _counts.GroupBy(entry => entry.Key.Scenario).OrderBy(group => group.Key, System.StringComparer.Ordinal))
        {
            text.Append("client ").Append(scenario.Key);
            foreach (KeyValuePair<(string Scenario, string Outcome), long> entry in scenario.OrderBy(entry => entry.Key.Outcome, System.StringComparer.Ordinal))
            {
                text.Append(CultureInfo.InvariantCulture, $" {entry.Key.Outcome}={entry.Value}");
            }

            text.AppendLine();
        }

        foreach (string surprise in _surprises)
        {
            text.AppendLine("surprise " + surprise);
        }

        return text.ToString();
    }
}

using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Planning;

/// <summary>
/// The MSBuild options of the consuming project, with any problem found in them. <see cref="Runtime"/>: the project is
/// the Falconet runtime (FalconetGenerate=Runtime), which gets the matchers and built-in collections; otherwise it is an
/// app, which gets its own header set.
/// </summary>
internal sealed record GeneratorOptions(string Namespace, string Visibility, bool Runtime, EquatableArray<DiagnosticInfo> Diagnostics)
{
    public const string DefaultNamespace = "Falconet.Generated";
}

/// <summary>Everything the templates place: options, version stamp, schema hash and the plan of each emitted file.</summary>
internal sealed record GenerationPlan(
    GeneratorOptions Options,
    string GeneratorVersion,
    string SchemaHash,
    EquatableArray<MethodPlan> Methods,
    EquatableArray<VersionPlan> Versions,
    HeaderSetPlan Request,
    HeaderSetPlan Response,
    int UserFiles,
    HPackPlan? HPack = null);

/// <summary>Builds the <see cref="GenerationPlan"/> of an effective schema.</summary>
internal static class GenerationPlanner
{
    public static GenerationPlan Plan(SchemaModel model, GeneratorOptions options, string generatorVersion)
    {
        var methods = new List<MethodPlan>();
        foreach (string method in model.Methods)
        {
            methods.Add(MethodPlanner.PlanMethod(method));
        }

        var versions = new List<VersionPlan>();
        foreach (string version in model.Versions)
        {
            versions.Add(MethodPlanner.PlanVersion(version));
        }

        HeaderSetPlan request = HeaderPlanner.Plan("RequestHeaders", model.RequestHeaders);
        HeaderSetPlan response = HeaderPlanner.Plan("ResponseHeaders", model.ResponseHeaders);

        // The HPACK tables go into the runtime only: an app's header set keeps the default schema's bit indexes, so the
        // runtime's static index -> slot table holds for it, and its own headers are matched by name.
        HPackPlan? hpack = options.Runtime && model.HPack is not null ? HPackPlanner.Plan(model.HPack, request, response) : null;
        return new GenerationPlan(
            options,
            generatorVersion,
            Hash(model),
            EquatableArray.From(methods),
            EquatableArray.From(versions),
            request,
            response,
            model.UserFiles,
            hpack);
    }

    /// <summary>The first 8 bytes, as lower-case hex, of the SHA-256 of a canonical text of the effective schema.</summary>
    public static string Hash(SchemaModel model)
    {
        var text = new StringBuilder();
        text.Append("methods\n");
        foreach (string method in model.Methods)
        {
            text.Append(method).Append('\n');
        }

        text.Append("versions\n");
        foreach (string version in model.Versions)
        {
            text.Append(version).Append('\n');
        }

        AppendHeaders(text, "requestHeaders", model.RequestHeaders);
        AppendHeaders(text, "responseHeaders", model.ResponseHeaders);
        if (model.HPack is not null)
        {
            text.Append("hpack\n");
            foreach (HPackStaticEntry entry in model.HPack.StaticTable)
            {
                text.Append(entry.Name).Append('\u001F').Append(entry.Value).Append('\n');
            }

            foreach (HuffmanCode code in model.HPack.Huffman)
            {
                text.Append(code.Code.ToString("x", System.Globalization.CultureInfo.InvariantCulture)).Append('/').Append(code.Bits.ToString(System.Globalization.CultureInfo.InvariantCulture)).Append('\n');
            }
        }

        byte[] hash;
        using (SHA256 sha = SHA256.Create())
        {
            hash = sha.ComputeHash(Encoding.UTF8.GetBytes(text.ToString()));
        }

        var hex = new StringBuilder(16);
        for (int i = 0; i < 8; i++)
        {
            hex.Append(hash[i].ToString("x2", System.Globalization.CultureInfo.InvariantCulture));
        }

        return hex.ToString();
    }

    private static void AppendHeaders(StringBuilder text, string title, EquatableArray<HeaderModel> headers)
    {
        text.Append(title).Append('\n');
        foreach (HeaderModel header in headers)
        {
            text.Append(header.Name)
                .Append(header.Primary ? "|primary" : string.Empty)
                .Append(header.ContentLength ? "|contentLength" : string.Empty);
            foreach (string value in header.Values)
            {
                text.Append('\u001F').Append(value);
            }

            text.Append('\n');
        }
    }
}

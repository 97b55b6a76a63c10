import { Type, type Static } from 'typebox';
import { ConsentBody } from '../consent/consent.js';
import { StatusObject } from '../respondents/schemas.js';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = Type.Optional;

export const CreateEmploymentBody = Type.Object({
  reference: Opt(Str('Your unique reference; generated when absent')),
  applicant: Type.Object(
    {
      firstname: Type.String({ minLength: 1 }),
      lastname: Type.String({ minLength: 1 }),
      middlename: Opt(Str()),
      phone: Opt(Str('A Nigerian phone number')),
      gender: Opt(Str()),
      dob: Opt(Str('DD-MM-YYYY; required at risk level HIGH')),
    },
    { description: 'The employee whose employment is checked' },
  ),
  employerName: Type.String({ minLength: 1 }),
  employerEmail: Type.String({ minLength: 1, description: 'The employer contact (HR): the request link is sent here' }),
  employerPhone: Opt(Str('A Nigerian phone number')),
  title: Type.String({ minLength: 1, description: 'The job title the applicant claims' }),
  startDate: Type.String({ minLength: 1, description: 'Claimed start date: DD/MM/YYYY, DD-MM-YYYY or YYYY-MM-DD' }),
  endDate: Opt(Str('Claimed end date; absent while still employed there')),
  consent: Opt(ConsentBody),
});
export type CreateEmploymentBody = Static<typeof CreateEmploymentBody>;

export const EmploymentRecord = Type.Object({
  id: Type.Integer(),
  reference: Str('Addition: your reference, or the one generated'),
  employerName: Str(),
  employerPhone: Str(),
  employerEmail: Str(),
  startDate: Str('DD/MM/YYYY: the employer-confirmed start date (the claim until the employer answers)'),
  endDate: Str('DD/MM/YYYY, empty while employed: employer-confirmed (the claim until the employer answers)'),
  title: Str('Employer-confirmed title (the claim until the employer answers)'),
  employeeStartDate: Str('DD/MM/YYYY: the start date the applicant claimed'),
  rehire: Type.Boolean({ description: 'The employer would rehire; false until the employer answers' }),
  employerRespondedAt: Str('UTC, without offset; empty until the employer answers'),
  applicant: Type.Object({
    firstname: Str(),
    lastname: Str(),
    middlename: Str(),
    phone: Str(),
    gender: Str(),
    photo: Str(),
  }),
  status: StatusObject,
  industry: Str(),
  comment: Str(),
  companyName: Str(),
  employmentType: Str(),
  supervisorName: Str(),
  supervisorTitle: Str(),
  jobBenefits: Str('Comma-separated'),
  attestatorName: Str(),
  attestatorTitle: Str(),
  attestatorContact: Str(),
  companyAddress: Str(),
  compensationRate: Str(),
  salaryRange: Str(),
  supervisorEmail: Str(),
  supervisorPhone: Str(),
  verifiedPoc: Type.Boolean({ description: 'The employer answered through the link sent to employerEmail' }),
  currentlyEmployed: Type.Boolean({ description: 'The employer says the applicant still works there' }),
  employerConsented: Type.Boolean({ description: 'The employer agreed to give the reference' }),
  employeeCurrentlyEmployed: Type.Boolean({ description: 'The applicant claims to still work there (no claimed end date)' }),
  claimed: Type.Object(
    { title: Str(), startDate: Str('DD/MM/YYYY'), endDate: Str('DD/MM/YYYY or empty') },
    { description: 'Addition: what the applicant claimed, kept after the employer corrects it' },
  ),
  createdAt: Str('Addition: UTC, without offset'),
  completedAt: Str('Addition: empty until it completes or is cancelled'),
});
